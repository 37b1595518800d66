// Drives the web console of one node of a three-node cluster in headless Chromium (see console-browser.mjs)
// and checks that it shows every node of the cluster with the load that node reported (not only its own),
// the node that takes the test's produce traffic with bytes in, a table topic whose partitions all nodes lead
// (cluster-wide, from the shared catalog), and a partition move that finished.
//
// usage: node console-cluster-check.mjs <console URL> <expectations JSON>
// expectations: { self, nodes: [ids], busyNode, table, tableRows, topic, partition, from, to }
// The last line of stdout is a JSON summary; any failure exits 1 with the reason on stderr.
import { runCheck, equals, contains, matches } from './console-browser.mjs';

const [base, expectJson] = process.argv.slice(2);
const want = JSON.parse(expectJson);

await runCheck(base, async ({ cell, open }) => {
  await open('#/cluster', 'cluster');
  for (const id of want.nodes) {
    await cell('nodes', id, 'state', equals('online'), `node ${id} is online`);
    // this node's load is measured now; every other node's is its last report to the controller leader
    await cell('nodes', id, 'load-age', id === want.self ? equals('now') : matches(' ago$'), `node ${id} reported its load`);
    await cell('nodes', id, 'cpu', matches('%$'), `CPU of node ${id}`);
    await cell('nodes', id, 'requests', matches('/s$'), `requests of node ${id}`);
  }
  // the node leading the produced partition takes bytes in (a rate above zero, from its own reports)
  await cell('nodes', want.busyNode, 'bytes-in', matches('^([1-9][0-9.]* B|[0-9.]+ [KMGT]iB)/s$'),
    `bytes in of node ${want.busyNode}`);

  // the table topic run by all three nodes, its rows from the shared catalog, every record in the table
  await open('#/tables', 'tables');
  await cell('tables', want.table, 'rows', equals(want.tableRows), 'rows of the cluster\'s table topic');
  await cell('tables', want.table, 'behind', equals(0), 'records not yet in the table');
  await cell('tables', want.table, 'freshness', equals('up to date'), 'freshness of the table');
  await cell('tables', want.table, 'coordinator', matches('^node [123]$'), 'the table\'s coordinator');

  await open('#/moves', 'moves');
  const key = `${want.topic}-${want.partition}`;
  await cell('finished-moves', key, 'from', equals(want.from.join(', ')), 'the finished move\'s source');
  await cell('finished-moves', key, 'to', equals(want.to.join(', ')), 'the finished move\'s target');
  await cell('finished-moves', key, 'leader', equals(want.to[0]), 'the moved partition\'s leader');
});
