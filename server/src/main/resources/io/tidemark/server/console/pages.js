// One function per page: fetch the page's JSON, return its DOM. Routes keep all state (#/page/item?params).
import { h, link, table, cards, badge, num, bytes, rate, percent, duration, ago, pager } from './dom.js';

export class ApiError extends Error {}

async function api(path) {
  const response = await fetch(path, { headers: { Accept: 'application/json' }, cache: 'no-store' });
  let body = null;
  try { body = await response.json(); } catch (e) { body = null; }
  if (!response.ok) {
    throw new ApiError((body && body.message) || `${path} answered HTTP ${response.status}`);
  }
  return body;
}

function query(route, keys) {
  const p = new URLSearchParams();
  for (const k of keys) if (route.params.has(k)) p.set(k, route.params.get(k));
  const s = p.toString();
  return s ? '?' + s : '';
}

const enc = encodeURIComponent;

// ---------------------------------------------------------------- cluster

async function cluster() {
  const c = await api('/api/console/cluster');
  const me = c.thisNode;
  const load = me.load;
  const stateBadge = s => badge(s, s === 'online' || s === 'voter' ? 'good' : (s === 'fenced' || s.startsWith('failed') ? 'bad' : 'warn'));
  return h('section', { 'data-page': 'cluster' },
    h('h1', null, 'Cluster ', c.clusterId ? h('span', { class: 'muted' }, c.clusterId) : null),
    h('h2', null, `This node (${me.id})`),
    cards([
      ['Health', me.healthy ? badge('healthy', 'good') : badge('unhealthy', 'bad'), 'health'],
      ['Readiness', me.ready ? badge('ready', 'good') : badge('not ready', 'warn'), 'ready'],
      ['Process CPU', percent(load.processCpu), 'cpu'],
      ['System CPU', percent(load.systemCpu), 'system-cpu'],
      ['Bytes in', rate(load.bytesInPerSec, 'B'), 'bytes-in'],
      ['Bytes out', rate(load.bytesOutPerSec, 'B'), 'bytes-out'],
      ['Requests', rate(load.requestsPerSec), 'requests'],
      ['WAL writes', rate(load.walBytesPerSec, 'B'), 'wal'],
      ['Uptime', duration(me.uptimeMs), 'uptime'],
    ]),
    h('p', { class: 'note' }, 'Checks: ',
      Object.entries({ ...me.health, ...me.readiness }).map(([k, v]) => badge(k, v ? 'good' : 'bad'))),
    h('h2', null, 'Nodes'),
    table('nodes', [
      { title: 'Node', key: 'id', value: n => [String(n.id), n.self ? ' ' : null, n.self ? badge('this node') : null] },
      { title: 'Roles', key: 'roles', value: n => n.roles.map(r => badge(r)) },
      { title: 'State', key: 'state', value: n => stateBadge(n.state) },
      { title: 'Kafka endpoint', key: 'endpoint', value: n => n.host ? `${n.host}:${n.port}` : '—' },
      { title: 'Rack', key: 'rack', value: n => n.rack || '—' },
      { title: 'Epoch', key: 'epoch', num: true, value: n => n.epoch >= 0 ? num(n.epoch) : '—' },
      { title: 'Partitions led', key: 'leader-partitions', num: true, value: n => num(n.leaderPartitions) },
      { title: 'CPU', key: 'cpu', num: true, value: n => n.load ? percent(n.load.processCpu) : '—' },
      { title: 'Bytes in', key: 'bytes-in', num: true, value: n => n.load ? rate(n.load.bytesInPerSec, 'B') : '—' },
      { title: 'Bytes out', key: 'bytes-out', num: true, value: n => n.load ? rate(n.load.bytesOutPerSec, 'B') : '—' },
      { title: 'Requests', key: 'requests', num: true, value: n => n.load ? rate(n.load.requestsPerSec) : '—' },
      { title: 'Load measured', key: 'load-age', num: true, value: n => n.loadAgeMs == null ? 'no report' : (n.self ? 'now' : duration(n.loadAgeMs) + ' ago') },
    ], c.nodes, n => n.id),
    h('p', { class: 'note' }, c.loadNote || 'Each node measures its own load and reports it to the controller leader every 2 seconds; this page shows the last report of every other node.'),
    h('h2', null, 'Controller quorum'),
    c.quorum ? [
      cards([
        ['Leader', c.quorum.leaderId >= 0 ? 'node ' + c.quorum.leaderId : 'none', 'quorum-leader'],
        ['Term', num(c.quorum.term), 'quorum-term'],
        ['Committed index', num(c.quorum.commitIndex), 'quorum-commit'],
        ['Metadata offset here', num(c.metadataOffset), 'metadata-offset'],
      ]),
      table('voters', [
        { title: 'Voter', key: 'id', value: v => [String(v.id), v.leader ? ' ' : null, v.leader ? badge('leader', 'good') : null] },
        { title: 'Log end index', key: 'log-end', num: true, value: v => num(v.logEndIndex) },
        { title: 'Behind', key: 'behind', num: true, value: v => v.behind >= 0 ? num(v.behind) : '—' },
        { title: 'Last contact', key: 'contact', num: true, value: v => v.lastContactAgoMs >= 0 ? duration(v.lastContactAgoMs) + ' ago' : '—' },
      ], c.quorum.voters.concat(c.quorum.observers.map(o => ({ ...o, observer: true }))), v => v.id),
    ] : h('p', { class: 'note' }, c.quorumNote));
}

// ---------------------------------------------------------------- topics

async function topics(route) {
  if (route.item) return topic(route);
  const internal = route.params.get('internal') === 'true';
  const page = await api('/api/console/topics' + query(route, ['offset', 'limit', 'q', 'internal']));
  const toggle = new URLSearchParams(route.params);
  toggle.set('internal', internal ? 'false' : 'true');
  toggle.delete('offset');
  return h('section', { 'data-page': 'topics' },
    h('h1', null, 'Topics'),
    h('div', { class: 'controls' },
      h('a', { href: '#/topics?' + toggle.toString() }, internal ? 'Hide internal topics' : 'Show internal topics')),
    table('topics', [
      { title: 'Topic', key: 'name', value: t => [link(t.name, 'topics', t.name), t.tableTopic ? ' ' : null,
        t.tableTopic ? badge('table') : null, t.internal ? ' ' : null, t.internal ? badge('internal') : null] },
      { title: 'Partitions', key: 'partitions', num: true, value: t => num(t.partitions) },
      { title: 'Leaders', key: 'leaders', value: t => Object.entries(t.leaders).map(([n, c]) =>
        badge(n === '-1' ? `none × ${c}` : `node ${n} × ${c}`, n === '-1' ? 'bad' : null)) },
      { title: 'Moving', key: 'moving', num: true, value: t => t.reassigning ? badge(String(t.reassigning), 'warn') : '0' },
      { title: 'In object storage', key: 'stored', num: true, value: t => bytes(t.storedBytes) },
      { title: 'Records (end offsets)', key: 'end-offsets', num: true, value: t => num(t.endOffsets) },
      { title: 'Records in', key: 'rate', num: true, value: t => rate(t.recordsPerSec) },
    ], page.topics, t => t.name, 'No topics.'),
    pager(route, page),
    page.sizesKnown ? null : h('p', { class: 'note' }, 'Sizes in object storage need the controller metadata, which this node does not have.'));
}

async function topic(route) {
  const d = await api('/api/console/topics/' + enc(route.item));
  const t = d.topic;
  return h('section', { 'data-page': 'topic' },
    h('h1', null, link('Topics', 'topics'), ' / ', t.name),
    cards([
      ['Partitions', num(t.partitions), 'partitions'],
      ['In object storage', bytes(t.storedBytes), 'stored'],
      ['Objects', num(t.objects), 'objects'],
      ['Records (end offsets)', num(t.endOffsets), 'end-offsets'],
      ['Records in', rate(t.recordsPerSec), 'rate'],
    ]),
    h('h2', null, 'Partitions'),
    table('partitions', [
      { title: 'Partition', key: 'partition', num: true, value: p => String(p.partition) },
      { title: 'Leader', key: 'leader', num: true, value: p => p.leader >= 0 ? String(p.leader) : badge('none', 'bad') },
      { title: 'Leader epoch', key: 'epoch', num: true, value: p => num(p.leaderEpoch) },
      { title: 'Replicas', key: 'replicas', value: p => p.replicas.join(', ') },
      { title: 'Moving', key: 'moving', value: p => p.adding.length || p.removing.length
        ? badge(`+[${p.adding.join(',')}] −[${p.removing.join(',')}]`, 'warn') : '' },
      { title: 'End offset', key: 'end-offset', num: true, value: p => num(p.endOffset) },
      { title: 'In object storage', key: 'stored', num: true, value: p => bytes(p.storedBytes) },
      { title: 'Objects', key: 'objects', num: true, value: p => num(p.objects) },
    ], d.partitions, p => p.partition),
    d.partitionsShown < t.partitions ? h('p', { class: 'note' }, `First ${d.partitionsShown} partitions shown.`) : null,
    h('h2', null, 'Configs set on the topic'),
    table('configs', [
      { title: 'Name', key: 'name', value: e => e[0] },
      { title: 'Value', key: 'value', value: e => e[1] },
    ], Object.entries(d.configs), e => e[0], 'Every config has its default.'));
}

// ---------------------------------------------------------------- groups

async function groups(route) {
  if (route.item) return group(route);
  const page = await api('/api/console/groups' + query(route, ['offset', 'limit', 'q']));
  return h('section', { 'data-page': 'groups' },
    h('h1', null, 'Consumer groups'),
    table('groups', [
      { title: 'Group', key: 'id', value: g => link(g.groupId, 'groups', g.groupId) },
      { title: 'Type', key: 'type', value: g => badge(g.type) },
      { title: 'State', key: 'state', value: g => g.state || '—' },
      { title: 'Members', key: 'members', num: true, value: g => num(g.members) },
      { title: 'Topics', key: 'topics', value: g => (g.topics || []).join(', ') },
      { title: 'Partitions', key: 'partitions', num: true, value: g => num(g.partitions) },
      { title: 'Lag', key: 'lag', num: true, value: g => num(g.lag) },
    ], page.groups, g => g.groupId, 'No groups.'),
    pager(route, page));
}

async function group(route) {
  const d = await api('/api/console/groups/' + enc(route.item));
  const g = d.group;
  return h('section', { 'data-page': 'group' },
    h('h1', null, link('Consumer groups', 'groups'), ' / ', g.groupId),
    cards([
      ['State', g.state || '—', 'state'],
      ['Members', num(g.members), 'members'],
      ['Lag', num(g.lag), 'lag'],
      ['Coordinator', g.coordinator === null ? '—' : 'node ' + g.coordinator, 'coordinator'],
      ['Assignor', d.assignor || '—', 'assignor'],
    ]),
    h('h2', null, 'Members'),
    table('members', [
      { title: 'Member', key: 'member', value: m => m.memberId },
      { title: 'Client', key: 'client', value: m => m.clientId },
      { title: 'Host', key: 'host', value: m => m.host },
      { title: 'Assigned partitions', key: 'assignment', value: m => m.assignment.join(', ') },
    ], d.members, m => m.memberId, 'No members: the group is empty.'),
    h('h2', null, 'Lag per partition'),
    table('lag', [
      { title: 'Topic', key: 'topic', value: p => link(p.topic, 'topics', p.topic) },
      { title: 'Partition', key: 'partition', num: true, value: p => String(p.partition) },
      { title: 'Committed', key: 'committed', num: true, value: p => num(p.committed) },
      { title: 'End offset', key: 'end', num: true, value: p => num(p.endOffset) },
      { title: 'Lag', key: 'lag', num: true, value: p => num(p.lag) },
      { title: 'Member', key: 'member', value: p => p.memberId || '—' },
    ], d.partitions, p => p.topic + '-' + p.partition, 'No committed offsets.'));
}

// ---------------------------------------------------------------- table topics

async function tables() {
  const v = await api('/api/console/tables');
  const host = location.hostname || 'localhost';
  const uri = v.restCatalogPort ? `http://${host}:${v.restCatalogPort}` : null;
  return h('section', { 'data-page': 'tables' },
    h('h1', null, 'Table topics'),
    h('p', { class: 'note' }, 'Every table topic of the cluster. Last commit, rows, dead letters and records behind come from the shared catalog and the partitions\' end offsets; state, rows written, skipped records and the last error are known to the nodes that run the topic (the leaders of its partitions): open their console for them.'),
    table('tables', [
      { title: 'Topic', key: 'topic', value: t => [link(t.topic, 'topics', t.topic), t.coordinator ? ' ' : null,
        t.coordinator ? badge('coordinator') : null] },
      { title: 'Table', key: 'table', value: t => t.table },
      { title: 'State', key: 'state', value: t => t.runsHere ? badge(t.state, t.state === 'RUNNING' ? 'good' : 'warn') : t.state },
      { title: 'Coordinator', key: 'coordinator', num: true, value: t => t.coordinatorNode >= 0 ? 'node ' + t.coordinatorNode : '—' },
      { title: 'Last commit', key: 'last-commit', value: t => ago(t.lastCommitMs, v.atMs) },
      { title: 'Freshness', key: 'freshness', num: true, value: t => t.freshnessMs === 0 ? 'up to date' : duration(t.freshnessMs) },
      { title: 'Records behind', key: 'behind', num: true, value: t => num(t.lagRecords) },
      { title: 'Rows', key: 'rows', num: true, value: t => num(t.rows) },
      { title: 'Rows written here', key: 'rows-written', num: true, value: t => num(t.rowsWritten) },
      { title: 'Errors', key: 'errors', num: true, value: t => t.badRecords == null ? '—' : (t.badRecords ? badge(num(t.badRecords), 'bad') : '0') },
      { title: 'Dead letters', key: 'dlq', num: true, value: t => t.deadLetterEnabled ? num(t.deadLetterRows ?? 0) : 'off' },
      { title: 'Last error', key: 'last-error', value: t => t.lastError || '' },
    ], v.tables, t => t.topic, 'No table topics in the cluster (set table.topic.enable=true on a topic).'),
    v.total > v.tables.length ? h('p', { class: 'note' }, `First ${v.tables.length} of ${v.total} shown.`) : null,
    h('h2', { id: 'query' }, 'Query examples'),
    uri ? [
      h('p', { class: 'note' }, 'Any Iceberg engine reads these tables through the REST catalog at ', h('code', null, uri),
        '. More engines and storage settings: docs/table-topics.md, "Querying through the built-in REST catalog".'),
      h('pre', { 'data-example': 'spark' }, [
        'spark-sql --packages org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.12.0 \\',
        '  --conf spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions \\',
        '  --conf spark.sql.catalog.tidemark=org.apache.iceberg.spark.SparkCatalog \\',
        '  --conf spark.sql.catalog.tidemark.type=rest \\',
        `  --conf spark.sql.catalog.tidemark.uri=${uri}`,
        '',
        ...v.tables.slice(0, 5).map(t => `SELECT * FROM tidemark.${t.table} LIMIT 10;`),
      ].join('\n')),
    ] : h('p', { class: 'note' }, 'The REST catalog is off on this node (table.rest.enable); see docs/table-topics.md for other catalogs.'));
}

// ---------------------------------------------------------------- schema registry

async function schemas(route) {
  if (route.item) return subject(route);
  const page = await api('/api/console/schemas' + query(route, ['offset', 'limit', 'q']));
  return h('section', { 'data-page': 'schemas' },
    h('h1', null, 'Schema registry'),
    h('p', { class: 'note' }, 'Global compatibility: ', badge(page.globalCompatibility)),
    table('subjects', [
      { title: 'Subject', key: 'subject', value: s => link(s.subject, 'schemas', s.subject) },
      { title: 'Type', key: 'type', value: s => badge(s.type) },
      { title: 'Latest version', key: 'latest', num: true, value: s => String(s.latestVersion) },
      { title: 'Schema id', key: 'id', num: true, value: s => String(s.latestId) },
      { title: 'Versions', key: 'versions', num: true, value: s => String(s.versions) },
      { title: 'Compatibility', key: 'compatibility', value: s => s.compatibility || '—' },
    ], page.subjects, s => s.subject, 'No subjects registered.'),
    pager(route, page));
}

async function subject(route) {
  const d = await api('/api/console/schemas/' + enc(route.item));
  const versions = d.versions.map(v => v.version).sort((a, b) => a - b);
  const to = Number(route.params.get('to') || versions[versions.length - 1]);
  const from = Number(route.params.get('from') || (versions.length > 1 ? versions[versions.length - 2] : to));
  const diff = from !== to ? await api(`/api/console/schemas/${enc(route.item)}/diff?from=${from}&to=${to}`) : null;
  const go = (f, t) => { location.hash = `#/schemas/${enc(route.item)}?from=${f}&to=${t}`; };
  const picker = (id, selected, onchange) => h('select', { id, onchange },
    versions.map(v => h('option', { value: String(v), selected: v === selected }, 'version ' + v)));
  const shown = d.versions.find(v => v.version === to) || d.versions[0];
  return h('section', { 'data-page': 'subject' },
    h('h1', null, link('Schema registry', 'schemas'), ' / ', d.subject.subject),
    cards([
      ['Type', d.subject.type, 'type'],
      ['Latest version', String(d.subject.latestVersion), 'latest'],
      ['Versions', String(d.subject.versions), 'versions'],
      ['Compatibility', d.subject.compatibility || '—', 'compatibility'],
    ]),
    h('h2', null, 'Diff between versions'),
    h('div', { class: 'controls' },
      h('label', null, 'from ', picker('diff-from', from, e => go(e.target.value, to))),
      h('label', null, 'to ', picker('diff-to', to, e => go(from, e.target.value))),
      diff ? h('span', { class: 'muted', 'data-diff-summary': '' }, `+${diff.added} −${diff.removed} lines`) : null),
    diff ? h('pre', { class: 'diff', 'data-diff': `${from}:${to}` }, diff.lines.map(l =>
      h('div', { class: l.op === '+' ? 'add' : (l.op === '-' ? 'del' : null) }, l.op + ' ' + l.text)))
      : h('p', { class: 'note' }, versions.length > 1 ? 'Pick two different versions.' : 'Only one version: nothing to compare.'),
    h('h2', null, `Version ${shown.version} (schema id ${shown.id})`),
    h('pre', { 'data-schema': String(shown.version) }, shown.schema));
}

// ---------------------------------------------------------------- moves and failovers

// A move's partition, assignment before and after, and leader now (a move in progress and a finished one).
const moveColumns = [
      { title: 'Topic', key: 'topic', value: m => link(m.topic, 'topics', m.topic) },
      { title: 'Partition', key: 'partition', num: true, value: m => String(m.partition) },
      { title: 'From', key: 'from', value: m => m.from.join(', ') },
      { title: 'To', key: 'to', value: m => m.to.join(', ') },
      { title: 'Leader now', key: 'leader', num: true, value: m => m.leader >= 0 ? String(m.leader) : 'none' },
];

async function moves() {
  const v = await api('/api/console/moves');
  return h('section', { 'data-page': 'moves' },
    h('h1', null, 'Moves and failovers in progress'),
    h('h2', null, 'Partition moves'),
    table('moves', [
      ...moveColumns,
      { title: 'Leader epoch', key: 'epoch', num: true, value: m => num(m.leaderEpoch) },
    ], v.moves, m => m.topic + '-' + m.partition, 'No partition is moving.'),
    v.movesTotal > v.moves.length ? h('p', { class: 'note' }, `First ${v.moves.length} of ${v.movesTotal} shown.`) : null,
    h('h2', null, 'Recently finished moves'),
    table('finished-moves', [
      ...moveColumns,
      { title: 'Took', key: 'took', num: true, value: m => duration(m.finishedAtMs - m.startedAtMs) },
      { title: 'Finished', key: 'finished', num: true, value: m => ago(m.finishedAtMs, v.atMs) },
    ], v.finished, m => m.topic + '-' + m.partition, 'No move finished since this node started.'),
    h('h2', null, 'Failovers'),
    v.failoversKnown ? table('failovers', [
      { title: 'Node', key: 'node', num: true, value: f => String(f.nodeId) },
      { title: 'Epoch', key: 'epoch', num: true, value: f => num(f.epoch) },
      { title: 'State', key: 'state', value: f => badge(f.state, 'warn') },
      { title: 'WAL recovered by', key: 'recoverer', value: f => f.recoveredBy >= 0 ? 'node ' + f.recoveredBy : '—' },
    ], v.failovers, f => f.nodeId, 'No broker is fenced or failing over.')
      : h('p', { class: 'note' }, 'Failovers are known only to nodes with the controller metadata.'));
}

export const pages = { cluster, topics, groups, tables, schemas, moves };
