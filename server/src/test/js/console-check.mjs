// Drives the web console in headless Chromium (Debian's /usr/bin/chromium through playwright-core; no
// browser is downloaded) and checks that its pages show the cluster the Java test built, then that they
// update by themselves after the test changes the cluster.
//
// usage: node console-check.mjs <console URL> <expectations JSON>
// Prints "READY" when the first checks passed and waits for a line on stdin (the test then creates a
// topic and produces more records), then checks the updates. The last line of stdout is a JSON summary;
// any failure exits 1 with the reason on stderr (see console-browser.mjs).
import { createInterface } from 'node:readline';
import { runCheck, fail, equals, contains, matches, any, TIMEOUT } from './console-browser.mjs';

const [base, expectJson] = process.argv.slice(2);
const want = JSON.parse(expectJson);

await runCheck(base, async ({ page, cell, open, timings }) => {
  // Cluster: this node, online, with its roles; the quorum led by it.
  await open('#/cluster', 'cluster');
  await cell('nodes', want.nodeId, 'state', equals('online'), 'the node is online');
  await cell('nodes', want.nodeId, 'roles', contains('broker'), 'the node is a broker');
  await cell('nodes', want.nodeId, 'roles', contains('controller'), 'the node is a controller');
  await cell('nodes', want.nodeId, 'endpoint', equals(want.kafkaEndpoint), 'the node\'s Kafka endpoint');
  await cell('voters', want.nodeId, 'id', contains('leader'), 'the node leads the quorum');
  await cell('nodes', want.nodeId, 'load-age', equals('now'), 'the node\'s load is measured now');
  await cell('nodes', want.nodeId, 'cpu', matches('%$'), 'the node\'s CPU');
  const cpu = await page.textContent('[data-card="cpu"] .value');
  if (!/%$/.test(cpu.trim())) fail(`the process CPU card shows "${cpu}"`);

  // Topics: the real topics, their partitions, end offsets and size.
  await open('#/topics', 'topics');
  await cell('topics', want.topic, 'partitions', equals(want.partitions), 'partitions of ' + want.topic);
  await cell('topics', want.topic, 'end-offsets', equals(want.records), 'records of ' + want.topic);
  await cell('topics', want.table, 'name', contains('table'), want.table + ' is marked a table topic');
  await open('#/topics/' + want.topic, 'topic');
  const partitionRows = await page.$$eval('table[data-list="partitions"] tbody tr', rows => rows.length);
  if (partitionRows !== want.partitions) fail(`the topic page lists ${partitionRows} partitions, not ${want.partitions}`);
  await cell('partitions', 0, 'leader', equals(want.nodeId), 'leader of partition 0');

  // Consumer groups: the group, its member and its lag.
  await open('#/groups', 'groups');
  await cell('groups', want.group, 'lag', equals(want.lag), 'lag of ' + want.group);
  await cell('groups', want.group, 'members', equals(1), 'members of ' + want.group);
  await open('#/groups/' + want.group, 'group');
  for (let p = 0; p < want.partitions; p++) {
    await cell('lag', `${want.topic}-${p}`, 'lag', equals(want.lagPerPartition), `lag of ${want.topic}-${p}`);
  }
  const assignment = await page.$eval('table[data-list="members"] td[data-col="assignment"]', el => el.textContent);
  if (!assignment.includes(`${want.topic}-0`)) fail(`the member's assignment is "${assignment}"`);

  // Table topics: the table with its rows and a commit.
  await open('#/tables', 'tables');
  await cell('tables', want.table, 'rows', equals(want.tableRows), 'rows of the table');
  await cell('tables', want.table, 'state', equals('RUNNING'), 'state of the table');
  await cell('tables', want.table, 'behind', equals(0), 'records not yet in the table');
  await cell('tables', want.table, 'freshness', equals('up to date'), 'freshness of the table');
  const lastCommit = await cell('tables', want.table, 'last-commit', any, 'last commit');
  if (lastCommit === 'never') fail('the table shows no commit');
  const example = await page.textContent('pre[data-example="spark"]');
  if (!example.includes(`tidemark.${want.tableName}`)) fail(`the query example does not name the table: ${example}`);

  // Schema registry: the subject, its versions and the diff between them.
  await open('#/schemas', 'schemas');
  await cell('subjects', want.subject, 'versions', equals(2), 'versions of ' + want.subject);
  await open('#/schemas/' + encodeURIComponent(want.subject), 'subject');
  await page.waitForSelector('pre[data-diff="1:2"]', { timeout: TIMEOUT });
  const added = await page.$$eval('pre[data-diff] div.add', els => els.map(e => e.textContent));
  if (!added.some(l => l.includes(want.addedField))) fail(`the diff adds no line with ${want.addedField}: ${JSON.stringify(added)}`);

  // Moves and failovers: none in progress on this node.
  await open('#/moves', 'moves');
  await page.waitForSelector('[data-empty="moves"]', { timeout: TIMEOUT });
  await page.waitForSelector('[data-empty="failovers"]', { timeout: TIMEOUT });
  await page.waitForSelector('[data-empty="finished-moves"]', { timeout: TIMEOUT });

  // Updates without a reload: the topics page shows a topic created after it was opened, the groups
  // page the lag after more records arrive.
  await open('#/topics', 'topics');
  await page.evaluate(() => { window.__sameDocument = true; });
  console.log('READY');
  const lines = createInterface({ input: process.stdin });
  const iterator = lines[Symbol.asyncIterator]();
  const go = await iterator.next();
  if (go.done) fail('the test closed stdin before the cluster changed');
  const changed = Date.now();
  await cell('topics', want.newTopic, 'partitions', equals(1), 'the topic created later');
  timings.newTopicShownMs = Date.now() - changed;
  await page.click(`a[data-page="groups"]`);
  await cell('groups', want.group, 'lag', equals(want.lagAfter), 'lag after more records');
  timings.lagUpdatedMs = Date.now() - changed;
  if (!await page.evaluate(() => window.__sameDocument === true)) fail('the page was reloaded');
  lines.close();

});
