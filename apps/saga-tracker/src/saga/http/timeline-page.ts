import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** apps/saga-tracker: the nearest folder up from this file (dist/src/... when compiled, src/... under jest) with a package.json. */
const APP_ROOT = (() => {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

/** The page script, compiled from apps/saga-tracker/page/timeline.ts (dist/page/timeline.js). */
export const PAGE_SCRIPT = readFileSync(join(APP_ROOT, 'dist', 'page', 'timeline.js'), 'utf8');

/** The HTML shell of the timeline and stuck-list pages: no data, the script fetches it with the tenant key. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Saga tracker</title>
<link rel="stylesheet" href="/assets/saga-timeline.css">
<link rel="icon" href="data:,">
</head>
<body>
<header><h1><a href="/sagas">Saga tracker</a></h1><p>Where is an order, what is it waiting for, what is stuck.</p></header>
<main id="app"><p>Loading...</p></main>
<noscript><p>This page needs JavaScript; the same data is at GET /v1/sagas/{orderId} and GET /v1/sagas?stuck=true.</p></noscript>
<script src="/assets/saga-timeline.js" defer></script>
</body>
</html>
`;

/** The page's styles: lanes, steps coloured by outcome, compensations dashed and red. */
export const PAGE_CSS = `
:root { --ink: #1f2328; --muted: #656d76; --line: #d0d7de; --progress: #0969da; --compensation: #cf222e;
  --failure: #bc4c00; --terminal: #1a7f37; font-family: system-ui, sans-serif; color: var(--ink); }
body { margin: 0 auto; max-width: 1100px; padding: 0 16px 48px; }
header h1 { margin: 16px 0 0; font-size: 22px; } header h1 a { color: inherit; text-decoration: none; }
header p { margin: 4px 0 16px; color: var(--muted); }
.mono { font-family: ui-monospace, monospace; font-size: 13px; }
form { margin: 8px 0 16px; display: flex; gap: 8px; align-items: center; }
input { padding: 4px 8px; font: inherit; } button { padding: 4px 12px; font: inherit; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; }
.status { font-weight: 700; padding: 2px 8px; border-radius: 4px; background: #ddf4ff; }
.status-shipped, .status-backordered { background: #dafbe1; }
.status-cancelled, .status-rejected, .status-refunded { background: #ffebe9; }
.badge { font-size: 12px; font-weight: 600; padding: 1px 6px; border-radius: 10px; margin-left: 8px;
  border: 1px solid currentColor; }
.badge.stuck { color: #fff; background: var(--compensation); border-color: var(--compensation); }
.badge.progress { color: var(--progress); } .badge.compensation { color: #fff; background: var(--compensation); }
.badge.failure { color: var(--failure); } .badge.terminal { color: var(--terminal); }
.diagram { overflow-x: auto; margin: 16px 0; border: 1px solid var(--line); border-radius: 6px; }
.lane-head { fill: #f6f8fa; stroke: var(--line); } .lane-name { text-anchor: middle; font-weight: 600; font-size: 14px; }
.lane-line { stroke: var(--line); stroke-dasharray: 4 4; }
.arrow { stroke-width: 2; fill: none; } .step-label { font-size: 12px; text-anchor: middle; }
.step-detail { font-size: 11px; text-anchor: middle; fill: var(--muted); }
.step-label.self, .step-detail.self { text-anchor: start; }
.step-progress .arrow, .step-progress .dot { stroke: var(--progress); } .step-progress .dot, .head-progress { fill: var(--progress); }
.step-terminal .arrow, .step-terminal .dot { stroke: var(--terminal); } .step-terminal .dot, .head-terminal { fill: var(--terminal); }
.step-failure .arrow, .step-failure .dot { stroke: var(--failure); } .step-failure .dot, .head-failure { fill: var(--failure); }
.step-compensation .arrow { stroke: var(--compensation); stroke-dasharray: 6 4; }
.step-compensation .dot, .head-compensation { fill: var(--compensation); }
.step-compensation .step-label { fill: var(--compensation); font-weight: 700; }
.steps { padding-left: 24px; } .steps li { margin: 2px 0; } .steps .service { display: inline-block; width: 90px; color: var(--muted); }
.steps .offset { display: inline-block; width: 80px; } .steps .type { font-weight: 600; } .steps .detail { color: var(--muted); margin-left: 8px; }
.outcome-compensation .type { color: var(--compensation); }
table.stuck { border-collapse: collapse; width: 100%; } table.stuck th, table.stuck td { text-align: left;
  padding: 4px 8px; border-bottom: 1px solid var(--line); font-size: 14px; }
.error { color: var(--compensation); font-weight: 600; } .empty { color: var(--muted); }
`;
