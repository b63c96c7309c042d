// The saga timeline page's script (served as /assets/saga-timeline.js): fetches the tracker's API with the
// tenant key the page was opened with and draws the saga as a sequence diagram, one lane per service.
// The key comes from the URL fragment (#key=..., never sent to a server or logged), is kept in this tab's
// sessionStorage, and is sent as `Authorization: Bearer <key>`, exactly like any other API client.

type Service = 'order' | 'inventory' | 'payment' | 'fulfillment';
type Outcome = 'progress' | 'compensation' | 'failure' | 'terminal';

interface Step {
  index: number;
  type: string;
  service: Service;
  outcome: Outcome;
  compensation: boolean;
  occurredAt: string;
  offsetMs: number;
  causedBy: number | null;
  traceId: string | null;
  detail: string | null;
}

interface Waiting {
  step: string;
  service: Service;
  compensation: boolean;
  since: string;
  waitedMs: number;
}

interface SagaView {
  orderId: string;
  traceIds: string[];
  state: {
    status: string;
    terminal: boolean;
    complete: boolean;
    missingCauses: number;
    startedAt: string;
    durationMs: number | null;
    lastStep: { type: string; service: Service; occurredAt: string };
    waitingFor: Waiting | null;
    stuck: boolean;
    stuckSince: string | null;
    stuckReason: string | null;
  };
  timeline: Step[];
}

interface SagaSummary {
  orderId: string;
  status: string;
  lastStep: { type: string; service: Service; occurredAt: string };
  waitingFor: Waiting | null;
  stuckSince: string | null;
  stuckReason: string | null;
}

const LANES: Service[] = ['order', 'inventory', 'payment', 'fulfillment'];
const KEY_STORAGE = 'saga-tracker.api-key';
const REFRESH_MS = 2000;
const SVG_NS = 'http://www.w3.org/2000/svg';

class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function apiKey(): string | null {
  const fromFragment = new URLSearchParams(location.hash.slice(1)).get('key');
  if (fromFragment) {
    sessionStorage.setItem(KEY_STORAGE, fromFragment);
    // Keep the key out of the address bar, the history and screenshots.
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(KEY_STORAGE);
}

async function api<T>(path: string, key: string): Promise<T> {
  const res = await fetch(path, { headers: { authorization: `Bearer ${key}`, accept: 'application/json' } });
  const body = (await res.json().catch(() => ({}))) as { message?: string };
  if (!res.ok) throw new ApiFailure(res.status, body.message ?? `HTTP ${res.status}`);
  return body as T;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string | null)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  for (const child of children) if (child !== null) node.append(child);
  return node;
}

function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const seconds = (ms: number) => `+${(ms / 1000).toFixed(3)}s`;

function waited(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

function statusBlock(saga: SagaView): HTMLElement {
  const s = saga.state;
  const badge = el('span', { id: 'saga-status', class: `status status-${s.status.toLowerCase()}` }, s.status);
  const facts: (HTMLElement | null)[] = [
    el('dt', {}, 'Status'),
    el('dd', {}, badge, s.stuck ? el('span', { class: 'badge stuck', id: 'saga-stuck' }, 'STUCK') : null),
    el('dt', {}, 'Saga'),
    el(
      'dd',
      { id: 'saga-ended' },
      s.terminal
        ? `ended${s.durationMs !== null ? ` after ${(s.durationMs / 1000).toFixed(3)} s` : ''}`
        : 'in progress',
    ),
    s.complete ? null : el('dt', {}, 'Seen'),
    s.complete
      ? null
      : el(
          'dd',
          { id: 'saga-incomplete' },
          `in part: ${s.missingCauses} step(s) react to steps not recorded yet` +
            (s.missingCauses === 0 ? ' (order.created not recorded yet)' : ''),
        ),
    el('dt', {}, 'Last step'),
    el('dd', {}, `${s.lastStep.type} (${s.lastStep.service})`),
  ];
  if (s.waitingFor)
    facts.push(
      el('dt', {}, 'Waiting for'),
      el(
        'dd',
        { id: 'saga-waiting' },
        `${s.waitingFor.step} from ${s.waitingFor.service}${s.waitingFor.compensation ? ' (compensation)' : ''}, ` +
          `for ${waited(s.waitingFor.waitedMs)}`,
      ),
    );
  if (s.stuck && s.stuckSince)
    facts.push(el('dt', {}, 'Stuck since'), el('dd', {}, `${s.stuckSince} (${s.stuckReason})`));
  facts.push(el('dt', {}, 'Trace'), el('dd', { class: 'mono' }, saga.traceIds.join(', ') || 'none'));
  return el('dl', { class: 'facts' }, ...facts);
}

/** The sequence diagram: a lane per service, a row per step, an arrow from the step it reacts to. */
function diagram(saga: SagaView): SVGElement {
  const laneWidth = 190;
  const top = 56;
  const row = 46;
  const width = laneWidth * LANES.length;
  const height = top + row * saga.timeline.length + 24;
  const x = (service: Service) => LANES.indexOf(service) * laneWidth + laneWidth / 2;
  const root = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    'aria-label': `sequence diagram of saga ${saga.orderId}`,
    id: 'sequence',
  });
  const defs = svg('defs', {});
  for (const outcome of ['progress', 'compensation', 'failure', 'terminal']) {
    const marker = svg('marker', {
      id: `arrow-${outcome}`,
      viewBox: '0 0 10 10',
      refX: 9,
      refY: 5,
      markerWidth: 7,
      markerHeight: 7,
      orient: 'auto-start-reverse',
    });
    marker.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', class: `head head-${outcome}` }));
    defs.append(marker);
  }
  root.append(defs);
  for (const lane of LANES) {
    const g = svg('g', { class: 'lane', 'data-lane': lane });
    g.append(
      svg('rect', { x: x(lane) - 70, y: 8, width: 140, height: 28, rx: 6, class: 'lane-head' }),
      svg('text', { x: x(lane), y: 27, class: 'lane-name' }, lane),
      svg('line', { x1: x(lane), y1: 36, x2: x(lane), y2: height - 8, class: 'lane-line' }),
    );
    root.append(g);
  }
  for (const step of saga.timeline) {
    const y = top + row * step.index + 26;
    const cause = step.causedBy !== null ? saga.timeline[step.causedBy] : null;
    const from = cause ? x(cause.service) : x(step.service);
    const to = x(step.service);
    const g = svg('g', {
      class: `step step-${step.outcome}`,
      'data-step': step.index,
      'data-type': step.type,
      'data-service': step.service,
      'data-outcome': step.outcome,
    });
    if (from !== to) {
      const end = to + (from < to ? -6 : 6);
      g.append(
        svg('line', {
          x1: from,
          y1: y,
          x2: end,
          y2: y,
          class: 'arrow',
          'marker-end': `url(#arrow-${step.outcome})`,
        }),
      );
    } else {
      g.append(
        svg('path', {
          d: `M${to},${y - 12} h28 v12 h-22`,
          class: 'arrow',
          'marker-end': `url(#arrow-${step.outcome})`,
        }),
      );
    }
    g.append(svg('circle', { cx: to, cy: y, r: 5, class: 'dot' }));
    // A step reacting to its own service's step loops back on the lane: its label goes right of the loop.
    const self = from === to;
    const labelX = self ? to + 40 : (from + to) / 2;
    const anchor = self ? ' self' : '';
    const label = `${seconds(step.offsetMs)} ${step.type}${step.compensation ? '  ↺ compensation' : ''}`;
    g.append(svg('text', { x: labelX, y: self ? y - 2 : y - 8, class: `step-label${anchor}` }, label));
    if (step.detail)
      g.append(
        svg('text', { x: labelX, y: self ? y + 12 : y + 14, class: `step-detail${anchor}` }, step.detail),
      );
    g.append(svg('title', {}, `${step.type} by ${step.service} at ${step.occurredAt} (${step.outcome})`));
    root.append(g);
  }
  return root;
}

function stepList(saga: SagaView): HTMLElement {
  return el(
    'ol',
    { id: 'steps', class: 'steps' },
    ...saga.timeline.map((s) =>
      el(
        'li',
        { class: `step-row outcome-${s.outcome}`, 'data-type': s.type, 'data-outcome': s.outcome },
        el('span', { class: 'mono offset' }, seconds(s.offsetMs)),
        el('span', { class: 'service' }, s.service),
        el('span', { class: 'type' }, s.type),
        el('span', { class: `badge outcome ${s.outcome}` }, s.compensation ? 'COMPENSATION' : s.outcome),
        s.detail ? el('span', { class: 'detail' }, s.detail) : null,
      ),
    ),
  );
}

function stuckTable(total: number, sagas: SagaSummary[]): HTMLElement {
  const section = el('section', { id: 'stuck-sagas' }, el('h2', {}, `Stuck sagas (${total})`));
  if (sagas.length === 0) {
    section.append(el('p', { class: 'empty' }, 'No saga is stuck.'));
    return section;
  }
  const now = Date.now();
  const rows = sagas.map((s) =>
    el(
      'tr',
      { 'data-order-id': s.orderId },
      el('td', { class: 'mono' }, el('a', { href: `/sagas/${s.orderId}` }, s.orderId)),
      el('td', {}, s.status),
      el('td', {}, `${s.lastStep.type} (${s.lastStep.service})`),
      el('td', {}, s.waitingFor ? `${s.waitingFor.step} from ${s.waitingFor.service}` : '-'),
      el('td', {}, s.waitingFor ? waited(now - Date.parse(s.waitingFor.since)) : '-'),
      el('td', {}, s.stuckReason ?? ''),
    ),
  );
  const head = el(
    'tr',
    {},
    ...['Order', 'Status', 'Last step', 'Waiting for', 'Waited', 'Why'].map((h) => el('th', {}, h)),
  );
  section.append(el('table', { class: 'stuck' }, el('thead', {}, head), el('tbody', {}, ...rows)));
  return section;
}

function keyForm(app: HTMLElement, why: string): void {
  const input = el('input', {
    type: 'password',
    id: 'api-key',
    autocomplete: 'off',
    placeholder: 'tenant API key',
  });
  const form = el(
    'form',
    { id: 'key-form' },
    el('label', { for: 'api-key' }, why),
    input,
    el('button', {}, 'Open'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    sessionStorage.setItem(KEY_STORAGE, input.value.trim());
    void render(app);
  });
  app.replaceChildren(form);
}

function lookupForm(): HTMLElement {
  const input = el('input', { id: 'order-id', placeholder: 'order id', size: '38' });
  const form = el('form', { id: 'lookup' }, input, el('button', {}, 'Trace'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    location.assign(`/sagas/${encodeURIComponent(input.value.trim())}`);
  });
  return form;
}

let timer: number | undefined;

async function render(app: HTMLElement): Promise<void> {
  window.clearTimeout(timer);
  const key = apiKey();
  if (!key) return keyForm(app, 'This page needs the tenant API key (open it as /sagas#key=<key>):');
  const orderId = /^\/sagas\/([^/]+)$/.exec(location.pathname)?.[1];
  try {
    const stuck = await api<{ total: number; sagas: SagaSummary[] }>('/v1/sagas?stuck=true&limit=50', key);
    const parts: HTMLElement[] = [lookupForm()];
    let ended = true;
    if (orderId) {
      try {
        const saga = await api<SagaView>(`/v1/sagas/${encodeURIComponent(decodeURIComponent(orderId))}`, key);
        ended = saga.state.terminal;
        document.title = `Saga ${saga.orderId}: ${saga.state.status}`;
        parts.push(
          el(
            'section',
            { id: 'saga', 'data-status': saga.state.status },
            el('h2', {}, 'Order ', el('span', { class: 'mono', id: 'saga-order-id' }, saga.orderId)),
            statusBlock(saga),
            el('div', { class: 'diagram' }, diagram(saga)),
            el('h3', {}, 'Steps'),
            stepList(saga),
          ),
        );
      } catch (error) {
        if (!(error instanceof ApiFailure) || error.status === 401) throw error;
        parts.push(el('p', { id: 'saga-error', class: 'error' }, error.message));
      }
    }
    parts.push(stuckTable(stuck.total, stuck.sagas));
    app.replaceChildren(...parts);
    // An open saga (or the stuck list) changes: look again shortly.
    if (!ended || !orderId) timer = window.setTimeout(() => void render(app), REFRESH_MS);
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 401) {
      sessionStorage.removeItem(KEY_STORAGE);
      return keyForm(app, 'The key was refused; enter a tenant API key:');
    }
    app.replaceChildren(
      el('p', { class: 'error', id: 'page-error' }, `The tracker did not answer: ${String(error)}`),
    );
    timer = window.setTimeout(() => void render(app), REFRESH_MS * 2);
  }
}

const app = document.getElementById('app');
if (app) void render(app);
