// SPDX-License-Identifier: MIT
/*
 * flamegraph.test.mjs - drives Debian's Chromium (headless, through
 * playwright-core) over an sa flame graph of a folded 60/30/10 split:
 * search from the keyboard reports each leaf's share within 0.1 point of
 * the folded counts (nested matches once), a clicked frame spans the full
 * width within 1 px, reset restores it, hover shows the details. TAP out.
 * Usage: node flamegraph.test.mjs SVG FOLDED
 */
import { chromium } from 'playwright-core';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [svgPath, foldedPath] = process.argv.slice(2);
const exe = process.env.SA_CHROMIUM || '/usr/bin/chromium';
let n = 0, failed = 0;
const ok = (cond, desc, extra) => {
	n++;
	if (!cond)
		failed++;
	console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${desc}`);
	if (extra)
		console.log(`# ${extra}`);
};

/* Expected shares from the folded text: leaf -> % of all samples. */
const shares = {};
let total = 0;
for (const line of readFileSync(foldedPath, 'utf8').split('\n')) {
	const m = line.match(/^(.*) (\d+)$/);
	if (!m)
		continue;
	const frames = m[1].split(';');
	const leaf = frames[frames.length - 1];
	shares[leaf] = (shares[leaf] || 0) + Number(m[2]);
	total += Number(m[2]);
}
for (const k of Object.keys(shares))
	shares[k] = (100 * shares[k]) / total;

const profileDir = mkdtempSync(join(tmpdir(), 'sa-chromium-'));
console.log('1..9');
let ctx;
try {
	ctx = await chromium.launchPersistentContext(profileDir, {
		executablePath: exe,
		headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
		       '--disable-component-update', '--disable-sync', '--no-first-run'],
		viewport: { width: 1400, height: 900 },
	});
	const page = ctx.pages()[0] || (await ctx.newPage());
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto('file://' + resolve(svgPath));

	/* The search regex is typed into window.prompt(), as a user would. */
	let answer = '';
	page.on('dialog', (d) => d.accept(answer));
	const search = async (re, key) => {
		answer = re;
		await page.keyboard.press(key);
		return page.locator('#matched').textContent();
	};
	const pct = (s) => Number((s.match(/([0-9.]+)%/) || [])[1]);

	const leaves = Object.keys(shares).sort();
	for (const [i, leaf] of leaves.slice(0, 3).entries()) {
		const got = await search(`^${leaf}$`, i % 2 ? 'Control+f' : '/');
		ok(Math.abs(pct(got) - shares[leaf]) <= 0.1,
		   `search ${leaf} (${i % 2 ? 'Ctrl-F' : '/'}) reports ${shares[leaf].toFixed(2)}%`,
		   `matched text: ${got}`);
	}
	const nested = await search('sa_run|sa_leaf_a', '/');
	ok(Math.abs(pct(nested) - 100) <= 0.1, 'nested matches count once (sa_run|sa_leaf_a = 100%)',
	   `matched text: ${nested}`);
	await page.keyboard.press('Escape');

	/* A frame's box by name; window.sa.names follows the order of #frames' children. */
	const box = async (name) => {
		const i = await page.evaluate((nm) => window.sa.names.indexOf(nm), name);
		return page.locator('#frames > g').nth(i).locator('rect');
	};
	const full = await page.locator('#all rect').boundingBox();
	const leaf = leaves[leaves.length - 1];
	const leafBox = await box(leaf);
	const before = await leafBox.boundingBox();
	await leafBox.click({ position: { x: 2, y: 5 } });
	const after = await leafBox.boundingBox();
	ok(Math.abs(after.width - full.width) <= 1 && Math.abs(after.x - full.x) <= 1,
	   `click on ${leaf} zooms it to the full width (within 1 px)`,
	   `full ${full.x.toFixed(2)}+${full.width.toFixed(2)}, zoomed ${after.x.toFixed(2)}+${after.width.toFixed(2)}`);
	ok(await page.locator('#reset').isVisible(), 'a Reset Zoom control appears');
	await page.locator('#reset').click();
	const back = await leafBox.boundingBox();
	ok(Math.abs(back.width - before.width) <= 0.5, 'Reset Zoom restores the frame width',
	   `before ${before.width.toFixed(2)}, after reset ${back.width.toFixed(2)}`);
	await (await box(leaves[0])).hover();
	const details = await page.locator('#details').textContent();
	ok(details.includes(leaves[0]) && details.includes(`${shares[leaves[0]].toFixed(2)}%`),
	   'hover shows name, samples and percentage', `details: ${details}`);
	ok(errors.length === 0, 'no script errors', errors.join('; '));
} catch (e) {
	ok(false, 'browser session', String(e).split('\n')[0]);
} finally {
	if (ctx)
		await ctx.close();
	rmSync(profileDir, { recursive: true, force: true });
}
for (; n < 9; )
	ok(false, 'not reached');
process.exit(failed ? 1 : 0);
