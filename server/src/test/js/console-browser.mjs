// What the console's browser checks share: Debian's headless Chromium through playwright-core (no browser is
// downloaded), a page that records every browser error, failed request and HTTP error, and helpers that wait
// for a page or a table cell. With CONSOLE_SCREENSHOTS=<dir>, each page opened is saved there as a PNG.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const TIMEOUT = 20_000;

export function fail(message) {
  throw new Error(message);
}

export const equals = value => ({ mode: 'equals', value: String(value) });
export const contains = value => ({ mode: 'contains', value: String(value) });
export const matches = value => ({ mode: 'matches', value: String(value) });
export const any = { mode: 'any', value: '' };

// Runs `check(console)` against the console at `base`; prints the JSON summary, or the reason on stderr and exits 1.
export async function runCheck(base, check) {
  const problems = [];
  const timings = {};
  const profile = mkdtempSync(join(tmpdir(), 'tidemark-console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = context.pages()[0] || await context.newPage();
    page.on('console', m => { if (m.type() === 'error') problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('pageerror', e => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', r => problems.push(`request failed: ${r.url()} ${r.failure() && r.failure().errorText}`));
    page.on('response', r => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });

    // The text of the cell (table, row key, column), once it satisfies `ok`, within the timeout.
    async function cell(list, key, col, ok, what) {
      const selector = `table[data-list="${list}"] tr[data-key="${key}"] td[data-col="${col}"]`;
      try {
        await page.waitForFunction(([s, expected, mode]) => {
          const el = document.querySelector(s);
          if (!el) return false;
          const text = el.textContent.trim();
          return mode === 'any' ? true : mode === 'contains' ? text.includes(expected)
            : mode === 'matches' ? new RegExp(expected).test(text) : text === expected;
        }, [selector, ok.value, ok.mode], { timeout: TIMEOUT, polling: 100 });
      } catch (e) {
        const now = await page.$eval(selector, el => el.textContent.trim()).catch(() => '(no such cell)');
        fail(`${what}: ${selector} is "${now}", wanted ${ok.mode} "${ok.value}"`);
      }
      return page.$eval(selector, el => el.textContent.trim());
    }

    async function open(hash, section) {
      const started = Date.now();
      await page.goto(base + '/' + hash);
      await page.waitForSelector(`section[data-page="${section}"]`, { timeout: TIMEOUT });
      timings[hash] = Date.now() - started;
      if (await page.isVisible('#error')) fail(`${hash} shows an error: ${await page.textContent('#error')}`);
      if (process.env.CONSOLE_SCREENSHOTS) {
        await page.screenshot({ path: join(process.env.CONSOLE_SCREENSHOTS, section + '.png'), fullPage: true });
      }
    }

    await check({ page, cell, open, timings });
    if (problems.length) fail('the browser reported problems:\n' + problems.join('\n'));
    console.log(JSON.stringify({ ok: true, timings }));
  } catch (e) {
    console.error(e.message);
    if (problems.length) console.error('browser problems so far:\n' + problems.join('\n'));
    process.exitCode = 1;
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    process.exit(process.exitCode || 0);
  }
}
