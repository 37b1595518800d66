// The console's shell: routes (#/page/item?params), renders the page and polls it every few seconds
// while the tab is visible.
import { h } from './dom.js';
import { pages } from './pages.js';

const POLL_MS = 3000;
const view = document.getElementById('view');
const status = document.getElementById('status');
const error = document.getElementById('error');
let timer = null;
let generation = 0;

function parseRoute() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, search] = raw.split('?', 2);
  const [page, ...rest] = path.split('/');
  return {
    page: pages[page] ? page : 'cluster',
    item: rest.length ? decodeURIComponent(rest.join('/')) : null,
    params: new URLSearchParams(search || ''),
  };
}

let waitingForVisible = false;

async function render() {
  clearTimeout(timer);
  if (document.hidden) {
    // A tab nobody looks at does not poll; it refreshes as soon as it is shown again.
    waitingForVisible = true;
    return;
  }
  const gen = ++generation;
  const route = parseRoute();
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', a.dataset.page === route.page);
  }
  try {
    const node = await pages[route.page](route);
    if (gen !== generation) return;
    view.replaceChildren(node);
    error.hidden = true;
    status.textContent = 'updated ' + new Date().toLocaleTimeString();
    status.dataset.updated = String(Date.now());
  } catch (e) {
    if (gen !== generation) return;
    error.hidden = false;
    error.replaceChildren(h('strong', null, 'Could not load this page: '), e.message);
    status.textContent = 'update failed ' + new Date().toLocaleTimeString();
  }
  if (gen === generation) {
    timer = setTimeout(render, POLL_MS);
  }
}

window.addEventListener('hashchange', render);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden && waitingForVisible) {
    waitingForVisible = false;
    render();
  }
});
render();
