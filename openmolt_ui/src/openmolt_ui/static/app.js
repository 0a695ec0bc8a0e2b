// OpenMolt's run viewer: plain JavaScript, no build step. It listens to two event streams
// (the list of runs, and the selected run's events) and posts answers and decisions.
// Everything shown is set as text, never as HTML.
"use strict";

const TOKEN = document.querySelector('meta[name="openmolt-token"]').content;
// No cookie carries the token (a cookie for 127.0.0.1 goes to every port): requests send it in
// the x-openmolt-token header, and EventSource, which cannot set headers, in its URL.
const AUTH = `token=${encodeURIComponent(TOKEN)}`;
const selected = { id: null, source: null, events: [], run: null, stream: null };
let lastState = { runs: [], questions: [], approvals: [] };

// Characters that act on the text around them rather than show: C0 and C1 controls (but a
// newline and a tab), DEL, the line and paragraph separators, and the bidirectional embeddings,
// overrides and isolates (one can make "exe.png" read "gnp.exe"). Text from outside (a tool's
// result, a sender's name, an error) shows each as its escape, as JSON writes it: \u202e.
const ACTING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function visible(text) {
  return String(text).replace(ACTING, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : key === "title" ? visible(value) : String(value));
  }
  node.append(...nodes(children));
  return node;
}

function nodes(items) {
  // Deeply flattened, without the empty values; strings and numbers become text.
  return items
    .flat(Infinity)
    .filter((item) => item !== undefined && item !== null && item !== false)
    .map((item) => (item instanceof Node ? item : document.createTextNode(visible(item))));
}

function json(value) {
  return JSON.stringify(value, null, 2);
}

function badge(status, testid) {
  const label = status.replace(/_/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
  return el("span", { class: `badge ${status}`, "data-testid": testid }, label);
}

function tokens(usage) {
  if (!usage) return "0";
  return `${usage.input_tokens + usage.output_tokens}`;
}

function quantity(n, word) {
  return `${number(n)} ${word}${n === 1 ? "" : "s"}`;
}

function cost(usage) {
  // as the CLI says it (openmolt_core._support.words.money): "$0.0123", or "$0.0123+ (2 calls
  // unpriced)": a cost of some calls only (others had no price) is a lower bound, never the
  // whole; "unknown" when no call had a price, "none" when nothing was spent (no model call)
  const u = usage && typeof usage === "object" ? usage : {};
  const unpriced = Number(u.unpriced_calls) || 0;
  if (typeof u.cost_usd !== "number") {
    if (unpriced) return `unknown (${quantity(unpriced, "call")} unpriced)`;
    return (u.calls || 0) + (u.input_tokens || 0) + (u.output_tokens || 0) ? "unknown" : "none";
  }
  const dollars = `$${u.cost_usd.toFixed(4)}`;
  return unpriced ? `${dollars}+ (${quantity(unpriced, "call")} unpriced)` : dollars;
}

function costInList(usage) {
  // the run list's words for a cost: none said when nothing was spent
  const said = cost(usage);
  if (said === "none") return "";
  return ` · ${said.startsWith("unknown") ? `cost ${said}` : said}`;
}

function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return date.toLocaleString();
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-openmolt-token": TOKEN },
    body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || `${response.status}`);
  return data;
}

// the list: runs (filtered, paged), questions, approvals ---------------------------------------

const PAGE = 50;
const list = { filters: {}, rows: null, more: false, paged: false, loading: false, again: false };

function filtersActive() {
  return Object.values(list.filters).some((v) => v);
}

function query(extra) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...list.filters, ...extra })) if (value) params.set(key, value);
  return params.toString();
}

async function getJSON(url) {
  const response = await fetch(url, { headers: { "x-openmolt-token": TOKEN } });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || `${response.status}`);
  return data;
}

async function loadRuns(older) {
  // The filtered (or paged) list comes from /api/runs; the stream's first page otherwise.
  if (list.loading) {
    list.again = true;
    return;
  }
  list.loading = true;
  const problem = document.getElementById("filter-error");
  try {
    if (older && !list.rows) list.rows = lastState.runs.slice(); // page on from the stream's first page
    const last = older && list.rows && list.rows.length ? list.rows[list.rows.length - 1] : null;
    const data = await getJSON(`/api/runs?${query({ limit: PAGE, before: last ? last.started : "" })}`);
    list.rows = last ? list.rows.concat(data.runs) : data.runs;
    list.paged = Boolean(last);
    list.more = data.more;
    problem.textContent = "";
  } catch (error) {
    problem.textContent = error.message;
  } finally {
    list.loading = false;
  }
  renderList();
  if (list.again) {
    list.again = false;
    loadRuns(false);
  }
}

function readFilters() {
  const form = document.getElementById("filters");
  list.filters = Object.fromEntries(
    [...form.querySelectorAll("[name]")].map((input) => [input.name, input.value.trim()])
  );
  if (list.filters.since) list.filters.since = new Date(list.filters.since).toISOString();
  list.rows = null;
  list.paged = false;
  if (filtersActive()) loadRuns(false);
  else renderList();
}

function renderState(state) {
  lastState = state;
  if (filtersActive() && !list.paged) loadRuns(false);
  renderList();
  renderQuestions(state.questions);
  renderApprovals(state.approvals);
  document.getElementById("nothing-waits").hidden =
    state.questions.length + state.approvals.length > 0;
  const agents = [...new Set(state.runs.map((r) => r.agent))].sort();
  const options = document.getElementById("agent-names");
  if (options.childElementCount !== agents.length)
    options.replaceChildren(...agents.map((a) => el("option", { value: a })));
  if (!selected.id && state.runs.length && !wanted) select(state.runs[0].run_id);
}

function renderList() {
  const rows = list.rows || (filtersActive() ? [] : lastState.runs);
  const more = list.rows ? list.more : lastState.runs.length >= 100;
  const runs = document.getElementById("runs");
  runs.replaceChildren(
    ...nodes(rows.map((run) =>
      el(
        "li",
        {
          "data-testid": "run-item",
          "data-run-id": run.run_id,
          "data-status": run.status,
          class: run.run_id === selected.id ? "selected" : "",
          onclick: () => select(run.run_id),
        },
        el("div", { class: "line1" }, el("span", { class: "agent" }, run.agent), badge(run.status)),
        el(
          "div",
          { class: "line2" },
          `${when(run.started)} · ${run.steps} steps · ${tokens(run.usage)} tokens`,
          el("span", { "data-testid": "run-item-cost" }, costInList(run.usage)),
          run.trigger && run.trigger.kind ? ` · ${cut(run.trigger.kind, 40)}` : "",
          run.user ? el("span", { "data-testid": "run-item-user" }, ` · for ${cut(run.user, 40)}`) : null,
          // listed when a filter finds it: its caller's page lists it too
          run.caller ? el("span", { "data-testid": "run-item-nested" }, ` · nested in ${cut(run.caller, 40)}`) : null
        )
      )
    ))
  );
  document.getElementById("no-runs").hidden = rows.length > 0;
  document.getElementById("no-runs").textContent = filtersActive() ? "No run matches." : "No runs yet.";
  document.getElementById("older").hidden = !more;
}

const drafts = new Map(); // what a person typed survives a re-render

function draft(key, fallback) {
  return drafts.has(key) ? drafts.get(key) : fallback;
}

const shown = { questions: null, approvals: null }; // re-render only on change: keeps focus

function renderQuestions(questions) {
  const text = JSON.stringify(questions);
  if (text === shown.questions) return;
  shown.questions = text;
  const box = document.getElementById("questions");
  box.replaceChildren(
    ...nodes(questions.map((q) => {
      const key = `q:${q.id}`;
      const answer = el("textarea", {
        "data-testid": "answer-input",
        rows: 2,
        placeholder: "Your answer",
        oninput: (e) => drafts.set(key, e.target.value),
      });
      answer.value = draft(key, "");
      const problem = el("div", { class: "error-text", "data-testid": "answer-error" });
      const disabled = q.kind === "parked" && !q.can_answer;
      if (q.how) {
        // a capability (or another gate) parked it: shown with its request; the application resumes it
        return el(
          "div",
          { class: "card ask", "data-testid": "question", "data-question-id": q.id, "data-run-id": q.run_id },
          el("div", { class: "who" }, `${q.agent} waits (parked run)`),
          el("div", { class: "message", "data-testid": "question-message" }, q.message),
          q.request && Object.keys(q.request).length
            ? el("pre", { class: "json", "data-testid": "question-request" }, json(q.request))
            : null,
          el("div", { class: "muted", "data-testid": "question-how" }, q.how)
        );
      }
      const send = async () => {
        if (!answer.value.trim()) {
          problem.textContent = "type an answer first: an empty answer tells the agent nothing";
          return;
        }
        try {
          await post(`/api/questions/${encodeURIComponent(q.id)}`, { answer: answer.value });
          drafts.delete(key);
          problem.textContent = "";
        } catch (error) {
          problem.textContent = error.message;
        }
      };
      return el(
        "div",
        { class: "card ask", "data-testid": "question", "data-question-id": q.id, "data-run-id": q.run_id },
        el("div", { class: "who" }, `${q.agent} asks${q.kind === "parked" ? " (parked run)" : ""}`),
        askedIn(q.run_id),
        el("div", { class: "message", "data-testid": "question-message" }, q.message),
        // a sign-in the viewer starts in this browser (its callback finishes only those)
        q.connect ? el("a", { href: `${q.connect}&${AUTH}`, "data-testid": "question-connect" }, "Connect the account") : null,
        answer,
        el("button", { class: "primary", "data-testid": "answer-send", onclick: send, disabled }, "Answer"),
        // a run started by a conversation (A2A, AG-UI, a chat, MCP) is answered there first
        q.kind === "parked" && answeredBy(q.origin, "human_input")
          ? el("div", { class: "muted", "data-testid": "question-where" }, answeredBy(q.origin, "human_input"))
          : disabled ? el("div", { class: "muted" }, "Load this agent's file (openmolt ui AGENT_FILE) to answer.") : null,
        problem
      );
    }))
  );
}

const HERE = "Answer or decide it under “Waiting for you”; the run resumes from where it stopped. The agent's file must be loaded: openmolt ui AGENT_FILE.";

const ANSWERED_BY = {
  // who goes on with a run parked on a question or on calls, by the surface that started it
  // (openmolt_mcp; openmolt_serve's a2a, agui and chats), as [a question, calls to decide];
  // a run of any other origin is answered here (or by the application that resumes it)
  mcp: [
    "The MCP client that started it asks its user (a form in its call); the run resumes with the answer given there.",
    "The MCP client that started it asks its user (a form in its call); the run resumes with the decision given there.",
  ],
  a2a: [
    "The A2A caller answers it: its next message to the task (input-required) goes on with the run. An answer here goes on without the caller, whose answer then finds the task moved on.",
    `The operator decides it (an A2A caller never approves the calls its words asked for); the task follows the run. ${HERE}`,
  ],
  agui: [
    "Its AG-UI thread's next request (a resume) goes on with it. An answer here goes on without the thread's user, whose resume then finds it answered.",
    "Its AG-UI thread's next request (a resume) decides it, or a decision here; the first goes on, the other finds it decided.",
  ],
  chat: [
    "Its chat's next message answers it. An answer here goes on without the person chatting.",
    `The chat was told to wait for a decision in the run viewer. ${HERE}`,
  ],
};

function answeredBy(origin, kind) {
  // the sentence for a parked question ("human_input") or calls ("approval") of this origin
  const by = Object.hasOwn(ANSWERED_BY, String(origin)) ? ANSWERED_BY[origin] : null;
  return by ? by[kind === "approval" ? 1 : 0] : null;
}

function decidedWhere(origin) {
  return answeredBy(origin, "approval") || "Load this agent's file (openmolt ui AGENT_FILE) to decide.";
}

function askedIn(runId) {
  // a link to the run a question or call waits in: the run the list shows (a sub-agent's caller)
  if (!runId) return null;
  const id = String(runId);
  // the listed run it is, or nests in (an id the application chose may hold a dot itself)
  const row = lastState.runs
    .filter((r) => id === r.run_id || id.startsWith(`${r.run_id}.`))
    .sort((a, b) => b.run_id.length - a.run_id.length)[0];
  const top = row ? row.run_id : id.split(".")[0];
  return el(
    "a",
    { class: "who asked-in", href: `#run=${encodeURIComponent(top)}`, "data-testid": "asked-in", "data-run-id": top },
    `in ${row ? `${row.agent}'s` : "its"} run${top === id ? "" : id.slice(top.length).includes(".guard.") ? ", by a guardrail agent" : ", by a sub-agent"}`
  );
}

function renderApprovals(approvals) {
  const text = JSON.stringify(approvals);
  if (text === shown.approvals) return;
  shown.approvals = text;
  const box = document.getElementById("approvals");
  box.replaceChildren(
    ...nodes(approvals.map((a) => {
      const inputKey = `a:${a.id}:input`;
      const reasonKey = `a:${a.id}:reason`;
      const input = el("textarea", {
        class: "json",
        "data-testid": "approval-input",
        oninput: (e) => drafts.set(inputKey, e.target.value),
      });
      input.value = draft(inputKey, json(a.input));
      const reason = el("input", {
        type: "text",
        "data-testid": "approval-reason",
        placeholder: "Reason (needed to deny)",
        oninput: (e) => drafts.set(reasonKey, e.target.value),
      });
      reason.value = draft(reasonKey, "");
      const problem = el("div", { class: "error-text", "data-testid": "approval-error" });
      const decide = async (action) => {
        const body = { action, reason: reason.value };
        if (action === "edit") {
          try {
            body.input = JSON.parse(input.value);
          } catch (error) {
            problem.textContent = `the input is not valid JSON: ${error.message}`;
            return;
          }
        }
        try {
          await post(`/api/approvals/${encodeURIComponent(a.id)}`, body);
          drafts.delete(inputKey);
          drafts.delete(reasonKey);
          problem.textContent = "";
        } catch (error) {
          problem.textContent = error.message;
        }
      };
      const disabled = a.kind === "parked" && !a.can_answer;
      return el(
        "div",
        { class: "card ask", "data-testid": "approval", "data-approval-id": a.id, "data-tool": a.tool },
        el("div", { class: "who" }, `${a.agent || "a run"} wants to call${a.kind === "parked" ? " (parked run)" : ""}`),
        askedIn(a.run_id),
        el("div", { class: "message" }, el("b", { "data-testid": "approval-tool" }, a.tool)),
        a.reason ? el("div", { class: "message", "data-testid": "approval-why" }, a.reason) : null,
        a.rule ? el("div", { class: "who" }, `rule: ${a.rule}`) : null,
        el("div", { class: "label" }, "input"),
        input,
        reason,
        el("button", { class: "primary", "data-testid": "approve", onclick: () => decide("approve"), disabled }, "Approve"),
        el("button", { "data-testid": "approve-edited", onclick: () => decide("edit"), disabled }, "Approve with edits"),
        el("button", { class: "danger", "data-testid": "deny", onclick: () => decide("deny"), disabled }, "Deny"),
        disabled ? el("div", { class: "muted", "data-testid": "approval-how" }, decidedWhere(a.origin)) : null,
        problem
      );
    }))
  );
}

// one run: its origin, plan, timeline, steps (model side, commands, tool calls, decisions) ----

function select(runId) {
  if (selected.stream) selected.stream.close();
  Object.assign(selected, { id: runId, events: [], run: null, stream: null });
  history.replaceState(null, "", `#run=${encodeURIComponent(runId)}`);
  showPage("runs");
  const stream = new EventSource(`/api/runs/${encodeURIComponent(runId)}/stream?after=0&${AUTH}`);
  selected.stream = stream;
  stream.addEventListener("event", (e) => {
    selected.events.push(JSON.parse(e.data));
    renderSoon();
  });
  stream.addEventListener("run", (e) => {
    selected.run = JSON.parse(e.data);
    renderSoon();
  });
  stream.addEventListener("reset", () => {
    selected.events = [];
  });
  for (const name of ["gone", "end"]) stream.addEventListener(name, () => stream.close());
  renderList();
  renderRun();
}

let renderQueued = false;
function renderSoon() {
  // events come in bursts (a whole stored run at once): draw once per frame
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    renderRun();
  });
}

// the statuses of a parked run: the core's list (openmolt_core.result.PARKED_STATUSES), which
// the server writes into the page
const PARKED = document.querySelector('meta[name="openmolt-parked"]').content.split(" ").filter(Boolean);

function callIndex(key) {
  // a call's key reads tool:<step>:<index>:<handle> (openmolt_core.durability.step_key)
  const parts = String(key || "").split(":");
  return parts.length > 2 && /^\d+$/.test(parts[2]) ? Number(parts[2]) : -1;
}

function runTree(runId, events) {
  // Group the events by the run they belong to: a sub-agent's carry sub_run_id (and the id of
  // the run that called it in parent_run_id); the others are the run's own.
  // A durable run recovered from a crash may deliver its events again (replayed: true, with
  // their first numbers): one already here is not shown twice.
  const runs = new Map();
  const get = (id, parent, agent) => {
    if (!runs.has(id)) runs.set(id, { id, parent, agent, events: [], seqs: new Set() });
    return runs.get(id);
  };
  const root = get(runId, null, null);
  for (const event of events) {
    const d = event.data || {};
    const own = !d.sub_run_id || d.sub_run_id === runId;
    const run = own ? root : get(d.sub_run_id, d.parent_run_id, d.sub_agent);
    if (d.replayed && run.seqs.has(event.seq)) continue;
    if (event.seq) run.seqs.add(event.seq);
    run.events.push(event);
  }
  return { root, runs };
}

function callOf(d) {
  // the command index of the call an event names: its step key (``call``, or its request's), or
  // its request's ``index`` (authorization:request); -1 for an event about no call
  const request = d.request && typeof d.request === "object" ? d.request : {};
  if (typeof d.call === "string") return callIndex(d.call);
  if (typeof request.call === "string") return callIndex(request.call);
  return Number.isInteger(request.index) ? request.index : -1;
}

function blocks(event) {
  // whether an event says its call will not run (a guardrail's refusal, a denied approval)
  const d = event.data || {};
  if (event.name === "guardrail") return d.action === "refuse" || d.action === "trip";
  return event.name === "approval:decision" && (d.action === "denied" || d.action === "refused");
}

const GUARDRAIL_ACTIONS = {
  refuse: "refused it",
  trip: "stopped the run",
  rewrite: "rewrote it",
  approve: "sent it for approval",
};

// what a verdict judged besides the value of its stage (the event's field): the words for a person
// an output guardrail made with message=True judged, or a failed call's error at the tool_result stage
const JUDGED = {
  humanMessage: "the message for people",
  message: "the question",
  reason: "the call's reason, for its approver",
  plan: "the plan",
  error: "the call's error (tool result)",
};

const WORDS_ACTIONS = {
  refuse: "refused",
  trip: "stopped the run on",
  rewrite: "rewrote",
};

function judgedField(d, s) {
  // which words a guardrail verdict judged: its field; a run recorded before events named it:
  // a call's at the output stage is its reason, one in a step that asks and does not finish is the question
  if (JUDGED[d.field]) return d.field;
  if (d.field || d.stage !== "output") return "";
  if (d.tool) return "reason";
  const types = ((s && s.commands) || []).map((c) => c && c.type);
  return types.includes("requestHumanInput") && !types.includes("finish") ? "message" : "";
}

function guardrailText(d, field) {
  const at = d.stage ? ` (${String(d.stage).replace(/_/g, " ")})` : "";
  const why = d.reason ? `: ${d.reason}` : "";
  if (JUDGED[field]) return `guardrail ${d.guardrail} ${WORDS_ACTIONS[d.action] || d.action} ${JUDGED[field]}${why}`;
  return `guardrail ${d.guardrail} ${GUARDRAIL_ACTIONS[d.action] || d.action}${at}${why}`;
}

function guardrailNote(event, d, field) {
  return { kind: "guardrail", name: event.name, judged: field || null, action: d.action, text: guardrailText(d, field) };
}

function wordsOf(s, type) {
  // the command of this type a verdict judged: the first one no verdict stopped yet
  const commands = s.commands || [];
  for (let i = 0; i < commands.length; i += 1) {
    if (!commands[i] || commands[i].type !== type) continue;
    const verdicts = s.said.get(i) || [];
    if (!verdicts.some((n) => n.action === "refuse" || n.action === "trip")) return i;
  }
  return -1;
}

function stepKey(key) {
  // `step:index` of a call's key (tool:<step>:<index>:<handle>)
  const parts = String(key || "").split(":");
  return `${parts[1]}:${callIndex(key)}`;
}

function stepOf(event) {
  return Number.isInteger(event.step) ? event.step : 0;
}

function steps(events, tainted, over, stored) {
  // over: when the run stopped (cancelled, killed, ended), or null while it goes on
  const byStep = new Map();
  const step = (n) => {
    if (!byStep.has(n))
      byStep.set(n, { n, model: null, fallbacks: [], commands: null, calls: [], notes: [], said: new Map() });
    return byStep.get(n);
  };
  // calls an event says will not run, whenever that event arrived (a batch's events interleave)
  const blocked = new Set(
    events.filter(blocks).map((e) => `${stepOf(e)}:${callOf(e.data || {})}`)
  );
  const slot = (s, index, tool) => {
    // the call of command `index`: every callTool command has one, run or not
    let call = s.calls.find((c) => c.index === index && index >= 0);
    if (!call) {
      call = { index, tool, input: null, state: "queued", decision: null, request: null, notes: [] };
      s.calls.push(call);
    }
    return call;
  };
  const nextFree = (s, tool) => {
    // the first callTool command for this tool that no call event took and none blocked
    const commands = s.commands || [];
    for (let i = 0; i < commands.length; i += 1) {
      if (!commands[i] || commands[i].type !== "callTool" || commands[i].tool !== tool) continue;
      if (blocked.has(`${s.n}:${i}`)) continue;
      const taken = s.calls.find((c) => c.index === i);
      if (!taken || taken.state === "queued" || taken.state === "waiting") return i;
    }
    return -1;
  };
  let previous = null;
  let latestStep = 0;
  const out = { plan: null, result: null, compactions: [] };
  const read = (event) => {
    const d = event.data && typeof event.data === "object" ? event.data : {};
    // an event of no step (one emitted outside the run: schedule:end, run:stranded) that comes
    // after the run's steps belongs with the latest, not before the first
    const n = stepOf(event) === 0 ? latestStep : stepOf(event);
    latestStep = Math.max(latestStep, n);
    const view = Object.hasOwn(VIEWS, event.name) ? VIEWS[event.name] : null;
    const s = view && view.run ? null : step(n);
    const index = s ? callOf(d) : -1;
    const at = { event, d, s, index, previous, slot, nextFree, out };
    if (view && view.read) view.read(at);
    else noted(at, eventNote(event, d));
  };
  for (const event of events) {
    try {
      read(event);
    } catch (error) {
      // an event the page cannot read as its name says is still shown, with what it holds
      const d = event.data && typeof event.data === "object" ? event.data : { data: event.data };
      step(stepOf(event)).notes.push({ kind: "event", name: event.name, text: `${event.name} (${error.message}): ${json(eventFields(d))}` });
    }
    if (event.name !== "model:fallback") previous = event; // a fallback is part of its model call
  }
  const list = [...byStep.values()].sort((a, b) => a.n - b.n);
  const last = list.length ? list[list.length - 1].n : 0;
  const { plan, result } = out;
  const parked = Boolean(result && PARKED.includes(result.status));
  const untrusted = new Set((tainted || []).map(stepKey)); // the run's taint records
  for (const s of list) {
    s.calls.sort((a, b) => (a.index < 0 || b.index < 0 ? (a.index < 0) - (b.index < 0) : a.index - b.index));
    for (const call of s.calls) {
      if (untrusted.has(`${s.n}:${call.index}`)) call.untrusted = true;
      // a call still running when its run stopped never finished: it ends with the run
      if (call.state === "running" && over) Object.assign(call, { state: "interrupted", end: over });
      // one still waiting for a decision then never gets one (a sub-agent's park its caller
      // went past, a run cancelled while a person was asked)
      if (call.state === "waiting" && over) call.state = "not_run";
      // a call still queued when its step is over never ran (a capability held or skipped it),
      // nor one when its run stopped (a parked run cancelled waits for nothing)
      if (call.state === "queued" && (s.n !== last || (result && !parked) || over)) call.state = "not_run";
      else if (call.state === "queued" && parked) call.state = "waiting";
    }
  }
  linkStored(list, stored);
  linkLoaded(list);
  for (const s of list) {
    // the first compaction that took this step in: the model read it verbatim until then
    const by = out.compactions.find((c) => c.through >= s.n && c.at > s.n);
    if (by) s.summarisedAt = by.at;
  }
  return { list, result, plan };
}

const READER = "openmolt.readResult"; // the offload capability's reader (openmolt_core.capabilities)

function linkStored(list, stored) {
  // a result too large for the model is stored whole (openmolt_core.capabilities.offload; the
  // run's state lists each: RunState.stored): its call says so (the event holds it whole, the
  // model read its shape and a preview), and each read of it says which call's result it reads
  const byFile = new Map();
  for (const entry of Array.isArray(stored) ? stored : []) {
    if (entry && typeof entry === "object" && typeof entry.file === "string") byFile.set(entry.file, entry);
  }
  const at = new Map([...byFile.values()].map((e) => [`${e.step}:${e.index}`, e]));
  for (const s of list) {
    for (const call of s.calls) {
      const entry = at.get(`${s.n}:${call.index}`);
      if (entry && call.tool !== READER)
        call.notes.push({ kind: "stored", text: `its result was stored whole as ${cut(entry.file, 200)}: the model read its shape and a preview, and reads slices with ${READER}` });
      const input = call.input && typeof call.input === "object" ? call.input : {};
      if (call.tool === READER && typeof input.result === "string") {
        const from = byFile.get(input.result);
        const part = ["pointer", "path", "lines", "bytes"].filter((k) => typeof input[k] === "string").map((k) => `${k} ${cut(input[k], 200)}`);
        const whose = from ? `the result of step ${from.step}'s ${cut(from.tool, 200)}` : cut(input.result, 200);
        call.notes.push({ kind: "stored", text: `reads ${whose}${part.length ? `: ${part.join(", ")}` : ""}` });
      }
    }
  }
}

const LOADER = "openmolt.loadTools"; // tool search's loader (openmolt_core.capabilities.toolsearch)

function linkLoaded(list) {
  // tool search: a loadTools call says which tools it made callable, and from which step; a
  // later call of one of them says which step loaded it
  const loaded = new Map();
  for (const s of list) {
    for (const call of s.calls) {
      if (loaded.has(call.tool) && loaded.get(call.tool) < s.n)
        call.notes.push({ kind: "loaded", text: `loaded by ${LOADER} at step ${loaded.get(call.tool)}` });
    }
    for (const call of s.calls) {
      const r = call.response;
      if (call.tool !== LOADER || call.state !== "ok" || !r || typeof r !== "object" || !Array.isArray(r.loaded)) continue;
      const names = r.loaded.filter((n) => typeof n === "string");
      for (const name of names) if (!loaded.has(name)) loaded.set(name, s.n);
      call.notes.push({ kind: "loaded", text: `made ${quantity(names.length, "tool")} callable from step ${s.n + 1}: ${names.map((n) => cut(n, 200)).join(", ")}` });
    }
  }
}

function eventFields(d) {
  // what an event says beyond where it belongs (its run, its sub-run, a replay)
  const { parent_run_id, sub_run_id, sub_agent, replayed, ...rest } = d;
  return rest;
}

function planList(items) {
  return el(
    "ul",
    {},
    items.map((item) =>
      el(
        "li",
        { "data-testid": "plan-item", "data-status": item.status || "pending" },
        el("span", { class: "mark" }, mark(item.status)),
        item.name,
        " ",
        badge(item.status || "pending"),
        item.notes ? el("div", { class: "notes" }, item.notes) : null,
        item.subSteps && item.subSteps.length ? planList(item.subSteps) : null
      )
    )
  );
}

function mark(status) {
  return { completed: "✓", inProgress: "▶", failed: "✗", skipped: "–" }[status] || "○";
}

function ms(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return "";
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(2)} s`;
}

const LONG = 4000; // the characters of a value shown before its "Show all" button
const opened = new Set(); // the long values a person opened stay open when the run re-renders

function long(attrs, text) {
  // a value as text; past LONG characters it is cut, with a button that shows it whole
  const whole = String(text === undefined || text === null ? "" : text);
  const key = `${attrs["data-testid"] || ""}:${whole.length}:${whole.slice(0, 200)}`;
  if (whole.length <= LONG || opened.has(key)) return el("pre", attrs, whole);
  const pre = el("pre", { ...attrs, "data-cut": "true" }, `${whole.slice(0, LONG)}…`);
  const more = el(
    "button",
    {
      class: "show-all",
      "data-testid": "show-all",
      onclick: () => {
        opened.add(key);
        pre.textContent = visible(whole);
        pre.removeAttribute("data-cut");
        more.remove();
      },
    },
    `Show all ${whole.length.toLocaleString("en-US")} characters`
  );
  return [pre, more];
}

function decisionView(decision) {
  const text = {
    approved: "approved",
    edited: "approved with an edited input",
    denied: "denied",
    refused: "not run: no valid decision",
  }[decision.action] || decision.action;
  return el(
    "div",
    { class: `decision ${decision.action}`, "data-testid": "decision", "data-action": decision.action },
    el("b", {}, text),
    decision.reason ? [" · ", el("span", { "data-testid": "decision-reason" }, decision.reason)] : null,
    decision.time ? el("span", { class: "muted" }, ` · ${when(decision.time)}`) : null,
    decision.action === "edited" && decision.input
      ? [el("div", { class: "label" }, "edited input"), long({ "data-testid": "decision-input" }, json(decision.input))]
      : null
  );
}

function toolView(call, subRuns) {
  const status = {
    queued: "queued",
    waiting: "waiting",
    running: "running",
    ok: "ok",
    failed: "failed",
    denied: "denied",
    refused: "denied",
    blocked: "refused",
    not_run: "not_run",
    interrupted: "interrupted",
    in_doubt: "in_doubt",
  }[call.state];
  const asked = call.request && call.decision && call.decision.action === "edited" ? call.request.input : null;
  return el(
    "div",
    { class: `command tool${call.untrusted ? " untrusted" : ""}`, "data-testid": "tool-call", "data-tool": call.tool, "data-status": status, "data-untrusted": call.untrusted ? "true" : null },
    el("span", { class: "kind" }, call.tool),
    " ",
    badge(status, "tool-status"),
    call.state === "ok" || call.state === "failed" ? el("span", { class: "duration" }, ` ${ms(call.duration || 0)}`) : null,
    call.request && call.request.reason
      ? [el("div", { class: "label" }, "reason, as its approver read it"), el("div", { "data-testid": "call-reason" }, call.request.reason)]
      : null,
    call.decision ? decisionView(call.decision) : null,
    asked ? [el("div", { class: "label" }, "input asked for"), long({ "data-testid": "asked-input" }, json(asked))] : null,
    call.input ? [el("div", { class: "label" }, asked ? "input run" : "input"), long({ "data-testid": "tool-input" }, json(call.input))] : null,
    call.state === "ok" || call.state === "failed"
      ? [
          el("div", { class: "label" }, call.error ? "error" : "output"),
          // someone other than the user wrote it: marked, and set as text like everything else
          call.untrusted ? el("div", { class: "untrusted-mark", "data-testid": "untrusted" }, "untrusted: someone else wrote this; the model read it") : null,
          long({ "data-testid": "tool-output" }, json(call.response)),
        ]
      : null,
    call.notes.map(noteView),
    subRuns
  );
}

function commandView(command, verdicts) {
  if (!command || typeof command !== "object" || command.type === "callTool") return null; // a call: shown with its result, below
  let text = "";
  if (command.type === "finish") text = `${command.status}: ${command.humanMessage || ""}`;
  else if (command.type === "wait") text = `${command.seconds} s`;
  else if (command.type === "updatePlan") text = `${(command.plan || []).length} plan steps`;
  else if (command.type === "updateMemory") text = `${command.mode} ${command.memory}`;
  else if (command.type === "requestHumanInput") text = command.message;
  return el(
    "div",
    { class: "command", "data-testid": "command", "data-type": command.type },
    el("span", { class: "kind" }, command.type),
    " ",
    text,
    // what a guardrail did to these words before anyone read them (the text above is the model's)
    verdicts && verdicts.length ? el("span", { class: "muted" }, " (as the model wrote it)") : null,
    (verdicts || []).map(noteView)
  );
}

function usageByModel(byModel) {
  // each model's own calls, when more than one model took part (a fallback's: a blocked or
  // billed failed call counts under the model that made it); they add up to the run's totals
  const rows = Object.entries(byModel && typeof byModel === "object" ? byModel : {});
  if (rows.length < 2) return null;
  const cell = (u, key) => number((u && u[key]) || 0);
  return el(
    "table",
    { class: "by-model", "data-testid": "usage-by-model" },
    el("thead", {}, el("tr", {}, ["model", "calls", "tokens in", "cached", "tokens out", "cost"].map((h) => el("th", {}, h)))),
    el(
      "tbody",
      {},
      rows.map(([model, u]) =>
        el(
          "tr",
          { "data-testid": "usage-model", "data-model": model },
          el("td", {}, model),
          el("td", {}, cell(u, "calls")),
          el("td", {}, cell(u, "input_tokens")),
          el("td", {}, cell(u, "cached_tokens")),
          el("td", {}, cell(u, "output_tokens")),
          el("td", { "data-testid": "usage-model-cost" }, cost(u))
        )
      )
    )
  );
}

function usageSum(list) {
  const sum = { input_tokens: 0, cached_tokens: 0, output_tokens: 0, cost_usd: null, unpriced_calls: 0 };
  for (const s of list) {
    const u = s.model && s.model.usage;
    if (!u) continue;
    if (u.cost_usd === null || u.cost_usd === undefined) sum.unpriced_calls += u.calls || 1;
    else sum.unpriced_calls += u.unpriced_calls || 0;
    sum.input_tokens += u.input_tokens || 0;
    sum.cached_tokens += u.cached_tokens || 0;
    sum.output_tokens += u.output_tokens || 0;
    if (u.cost_usd !== null && u.cost_usd !== undefined) sum.cost_usd = (sum.cost_usd || 0) + u.cost_usd;
  }
  return sum;
}

function fallbackView(f, answered) {
  const then = answered ? `${f.to_model} answered` : `the step went to ${f.to_model}`;
  const status = Number.isInteger(f.status_code) ? `HTTP ${f.status_code}, ` : "";
  return el(
    "div",
    { class: "fallback", "data-testid": "fallback" },
    `${f.from_model} failed (${status}${f.reason}): ${then}`,
    f.error ? el("div", { class: "muted", "data-testid": "fallback-error" }, cut(f.error, 500)) : null
  );
}

function modelView(s) {
  const m = s.model;
  if (!m) {
    // no model answered (yet): the models that failed still show
    return s.fallbacks.length ? el("div", { class: "model", "data-testid": "model-call" }, s.fallbacks.map((f) => fallbackView(f, false))) : null;
  }
  const u = typeof m.usage === "object" && m.usage ? m.usage : {};
  return el(
    "div",
    { class: "model", "data-testid": "model-call" },
    el(
      "div",
      { class: "model-line" },
      el("span", { class: "kind", "data-testid": "model-name" }, m.model || "model"),
      el("span", { "data-testid": "model-tokens" }, ` ${u.input_tokens || 0} in · ${u.cached_tokens || 0} cached · ${u.output_tokens || 0} out`),
      el("span", { "data-testid": "model-cost" }, ` · ${cost(u)}`),
      // a model that failed before it may have been billed (a blocked reply): counted here too
      s.fallbacks.length ? el("span", { class: "muted" }, " · with the calls that failed before it") : null,
      m.start && m.end ? el("span", { class: "duration" }, ` · ${ms((Date.parse(m.end) - Date.parse(m.start)) / 1000)}`) : null
    ),
    s.fallbacks.map((f) => fallbackView(f, true)),
    el("details", { "data-testid": "model-reply" }, el("summary", {}, "reply as the model wrote it"), long({}, m.output || ""))
  );
}

const STEPS_SHOWN = 100; // a long run's steps drawn at first (its latest), with a button for more
const shownSteps = new Map(); // run id → how many of its latest steps a person asked to see

function latest(runId, list) {
  // the steps of a run that are drawn (its latest), and how many earlier ones are not
  const count = shownSteps.get(runId) || STEPS_SHOWN;
  if (list.length <= count) return { shown: list, hidden: 0 };
  return { shown: list.slice(list.length - count), hidden: list.length - count };
}

function stepsView(runId, tree, all) {
  // a run of thousands of steps stays quick to draw: its latest steps, and earlier ones on request
  const { shown: list, hidden } = latest(runId, all);
  const more = hidden
    ? el(
        "button",
        {
          class: "show-all",
          "data-testid": "earlier-steps",
          onclick: () => {
            shownSteps.set(runId, (shownSteps.get(runId) || STEPS_SHOWN) + STEPS_SHOWN);
            renderRun();
          },
        },
        `Show ${number(Math.min(hidden, STEPS_SHOWN))} earlier steps (${number(hidden)} not shown)`
      )
    : null;
  return [more, ...list.map((s) => {
    const subs = [...tree.runs.values()].filter((r) => r.parent === runId);
    const forCall = (call) => {
      const mine = subs.filter((r) => {
        const tail = r.id.slice(runId.length + 1).split(".");
        return Number(tail[0]) === s.n && Number(tail[1]) === call.index;
      });
      return mine.map((r) => subRunView(r, tree));
    };
    const placed = new Set(s.calls.filter((c) => c.index >= 0).map((c) => c.index));
    const loose = subs.filter((r) => {
      const tail = r.id.slice(runId.length + 1).split(".");
      return Number(tail[0]) === s.n && !placed.has(Number(tail[1]));
    });
    return el(
      "div",
      { class: "step", "data-testid": "step", "data-step": s.n },
      el("div", { class: "head" }, s.n > 0 ? `Step ${s.n}` : "Before the first step"),
      s.summarisedAt
        ? el("div", { class: "muted", "data-testid": "step-summarised" }, `summarised at step ${s.summarisedAt}: the model read a summary of this step from then on, not its words`)
        : null,
      modelView(s),
      (s.commands || []).map((command, i) => commandView(command, s.said.get(i))),
      s.calls.map((c) => toolView(c, forCall(c))),
      loose.map((r) => subRunView(r, tree)),
      s.notes.map(noteView)
    );
  })];
}

function dueOf(d) {
  // a schedule's due time (its record's), as a person reads it: 2024-03-09 12:01 UTC
  const due = (d.record || {}).due;
  const at = due ? new Date(due) : null;
  return at && !Number.isNaN(at.getTime()) ? `${at.toISOString().slice(0, 16).replace("T", " ")} UTC` : String(due || "?");
}

function noted(at, note) {
  // a note about one call (its key or request names it) goes with that call, any other in its step
  const { event, d, s, index } = at;
  if (index < 0) {
    s.notes.push(note);
    return;
  }
  const call = at.slot(s, index, d.tool || (d.request || {}).tool);
  if (event.name === "taint") call.untrusted = true;
  call.notes.push(note);
}

function sentence(needs, say) {
  // a view that says an event in a sentence (when it has the fields the sentence needs)
  return { say: [needs, say], read: (at) => noted(at, eventNote(at.event, at.d)) };
}

// Every event name the page knows, and how it reads it: the one place. ``read`` puts the event
// where it belongs (a step's model call, a call, a note); ``run: true``: it is about the run, in
// no step; ``say``: the sentence a note says. A name not here (a capability's own) is a note with
// what the core's registry says of it (``about``) and its data. tests/ui/test_viewer_labels.py
// checks every name the core can store is here.
const VIEWS = {
  planUpdate: {
    run: true,
    read: ({ d, out }) => {
      if (!Array.isArray(d.plan)) throw new Error("its plan is not a list");
      out.plan = d.plan;
    },
  },
  finish: {
    run: true,
    read: ({ event, d, out }) => {
      out.result = d.result;
      if (out.result && PARKED.includes(out.result.status)) out.result = { ...out.result, parkedAt: event.time, parkedStep: stepOf(event) };
    },
  },
  llmOutput: { read: ({ event, d, s, previous }) => { s.model = { ...d, start: previous ? previous.time : null, end: event.time }; } }, // fallbacks included
  "model:fallback": { read: ({ d, s }) => { s.fallbacks.push(d); } },
  // previews while a reply streams: never numbered nor stored (openmolt_core.events.STREAM_EVENTS)
  "text:delta": { read: () => {} },
  "command:ready": { read: () => {} },
  commandsQueued: {
    read: ({ event, d, s, slot }) => {
      if (!Array.isArray(d.commands)) throw new Error("its commands are not a list");
      s.commands = d.commands;
      s.queued = event.time;
      s.commands.forEach((command, i) => {
        if (command && command.type === "callTool") {
          const call = slot(s, i, command.tool);
          if (!call.input) call.input = command.input;
        }
      });
    },
  },
  "approval:request": {
    read: ({ event, d, s, index, slot }) => {
      const r = d.request || {};
      const call = slot(s, index, r.tool);
      call.request = { ...r, time: event.time };
      if (call.state === "queued") call.state = "waiting";
    },
  },
  "approval:decision": {
    read: ({ event, d, s, index, slot }) => {
      const call = slot(s, index, d.tool);
      call.decision = { ...d, time: event.time };
      if (d.action === "denied" || d.action === "refused") call.state = d.action;
      if (!call.input && call.request) call.input = call.request.input;
    },
  },
  "tool:call": {
    read: ({ event, d, s, slot, nextFree }) => {
      const free = nextFree(s, d.tool);
      const call = free >= 0 ? slot(s, free, d.tool) : slot(s, -1 - s.calls.length, d.tool);
      Object.assign(call, { input: d.input, state: "running", start: event.time });
    },
  },
  "tool:response": {
    read: ({ event, d, s, slot }) => {
      let call = s.calls.find((c) => c.state === "running" && c.tool === d.tool);
      if (!call) call = slot(s, -1 - s.calls.length, d.tool);
      Object.assign(call, {
        state: d.error ? "failed" : "ok",
        response: d.response,
        error: d.error,
        duration: d.duration,
        end: event.time,
        input: call.input || d.input,
      });
    },
  },
  humanInput: {
    read: ({ event, d, s, previous }) => {
      s.notes.push({ kind: "humanInput", text: `asked: ${d.message}\nanswer: ${d.response}`, start: previous ? previous.time : null, end: event.time });
    },
  },
  error: {
    read: ({ event, d, s, index, slot }) => {
      const note = { kind: "error", name: event.name, text: `${d.kind}: ${d.message}` };
      if (index < 0) {
        s.notes.push(note);
        return;
      }
      // an error about one call (it failed, a capability or a decision refused it, it is in
      // doubt after a crash): its key (``call``, tool:<step>:<index>:<handle>) puts it with that call
      const call = slot(s, index, String(d.call).split(":").slice(3).join(":"));
      if (d.kind === "in_doubt") {
        // started before a crash, its result never recorded: it may or may not have taken effect
        Object.assign(call, { state: "in_doubt", end: call.start ? event.time : undefined });
        note.kind = "in_doubt";
        note.text = `in doubt: ${String(d.message).replace(/^in doubt: /, "")}`;
      }
      call.notes.push(note);
    },
  },
  memoryUpdate: {
    read: ({ d, s }) => {
      // a run for an end user writes that user's long-term memory (the agent's if it shares one)
      const user = selected.run && selected.run.user;
      const whose = user && d.memory === "longTerm" ? ` (end user ${cut(user, 80)}'s, unless the agent's memory is shared)` : "";
      s.notes.push({ kind: "memory", text: `${d.mode} ${d.memory}${whose}: ${d.data}` });
    },
  },
  guardrail: {
    read: ({ event, d, s, index, slot }) => {
      if (index >= 0) {
        const call = slot(s, index, d.tool);
        call.notes.push(guardrailNote(event, d, judgedField(d, s)));
        if (blocks(event)) Object.assign(call, { state: "blocked", blockedBy: d.guardrail });
        return;
      }
      // a verdict on a question, a plan or a finish's message goes with its command; any other in its step
      const field = judgedField(d, s);
      const type = { message: "requestHumanInput", humanMessage: "finish", plan: "updatePlan" }[field];
      const at = type ? wordsOf(s, type) : -1;
      if (at >= 0) {
        if (!s.said.has(at)) s.said.set(at, []);
        s.said.get(at).push(guardrailNote(event, d, field));
      } else s.notes.push(guardrailNote(event, d, field));
    },
  },
  // the core's events emitted beside the loop's, each said in a sentence: the fields it needs, how
  compaction: {
    ...sentence(["through_step", "tokens_before", "tokens_after"], (d) =>
      `summarised the steps through step ${d.through_step}: about ${number(d.tokens_before)} tokens to ${number(d.tokens_after)}` +
      (Array.isArray(d.files) && d.files.length ? ` (files kept: ${d.files.join(", ")})` : "")),
    read: (at) => {
      // the steps it summarised say so: from this step on, the model reads a summary of them
      noted(at, eventNote(at.event, at.d));
      if (Number.isInteger(at.d.through_step)) at.out.compactions.push({ at: at.s ? at.s.n : 0, through: at.d.through_step });
    },
  },
  taint: sentence(["tool"], (d) => {
    // a call's result (tool:<step>:<index>:<handle>), or what the run started from: its memory a
    // tainted run wrote (memory:longTerm), a tool list (tools:<id>)
    const call = String(d.call || "");
    const what = call.startsWith("memory:")
      ? `${d.tool} is untrusted (a tainted run wrote it)`
      : call.startsWith("tool:") || !call ? `the result of ${d.tool} is untrusted` : `${d.tool} is untrusted`;
    return `${what}: from now on the taint policy judges the run's outbound calls`;
  }),
  "authorization:request": sentence(["request"], (d) => {
    const r = d.request || {};
    const scopes = Array.isArray(r.scopes) && r.scopes.length ? ` (${r.scopes.join(", ")})` : "";
    const why = r.reason ? `: ${String(r.reason).replace(/_/g, " ")}` : "";
    return `${r.tool || "the call"} waits for ${r.user || "its user"} to connect ${r.integration || "an account"}${scopes}${why}${r.url ? `\n${r.url}` : ""}`;
  }),
  "run:stranded": sentence(["version", "current"], (d) =>
    `waits for agent version ${d.version}, which no live worker serves (this worker serves ${d.current}${d.worker ? `; it last ran on ${d.worker}` : ""})`),
  "schedule:run": sentence(["schedule_id", "record"], (d) => `schedule ${d.schedule_id}: the run due ${dueOf(d)} started`),
  "schedule:end": sentence(["schedule_id", "record"], (d) => {
    const why = [d.record.error, d.record.note].filter(Boolean).join("; ");
    return `schedule ${d.schedule_id}: the run due ${dueOf(d)} ended: ${d.record.status}${why ? ` (${why})` : ""}`;
  }),
  "schedule:skip": sentence(["schedule_id", "record"], (d) =>
    `schedule ${d.schedule_id}: the run due ${dueOf(d)} was skipped${d.record.note ? `: ${d.record.note}` : ""}`),
};

function eventNote(event, d) {
  // an event the page has no view of: its name, what the core's registry says of it, and what it
  // says (a sentence for the core's own, its data for a capability's)
  const [needs, say] = (Object.hasOwn(VIEWS, event.name) && VIEWS[event.name].say) || [null, null];
  const sayable = say && needs.every((key) => d[key] !== undefined && d[key] !== null);
  return { kind: "event", name: event.name, about: event.about, text: sayable ? say(d) : `${event.name}: ${json(eventFields(d))}` };
}

function noteView(note) {
  // what an event says: a step's, or a call's when it names one
  const about = note.about && typeof note.about === "object" ? note.about : null;
  return el(
    "div",
    { class: `command note ${note.kind}`, "data-testid": `note-${note.kind}`, "data-event": note.name || null, "data-judged": note.judged || null },
    about && (about.what || about.by)
      ? el(
          "div",
          { class: "about", "data-testid": "event-about" },
          el("b", {}, note.name),
          about.what ? ` · ${about.what}` : "",
          about.by ? el("span", { class: "muted" }, ` · by capability ${about.by}`) : ""
        )
      : null,
    long({}, note.text)
  );
}

const COUNTED = {
  // whether the run's totals hold its nested runs' spend (an agent tool's always do; a tool that
  // runs an agent itself adds it with context.run.usage.add, or it is not there)
  yes: "(counted in this run's totals)",
  no: "(not in this run's totals: the tool that ran it did not add its usage to the calling run)",
  later: "(counted in this run's totals when its call ends)",
};

function countedIn(run, tree, own) {
  // yes, no or later: whether the run's tokens hold its own model calls' and every nested run's
  const tokens = (u) => (u.input_tokens || 0) + (u.output_tokens || 0);
  let nested = 0;
  for (const sub of tree.runs.values())
    if (sub !== tree.root) nested += tokens(usageSum(steps(sub.events, [], tree.over).list));
  if (!nested) return "yes";
  if (["running", "waiting"].includes(run.status)) return "later"; // a parked run's totals are its own so far
  return tokens(run.usage || {}) >= tokens(usageSum(own)) + nested ? "yes" : "no";
}

function subRunView(sub, tree) {
  const { list, result, plan } = steps(sub.events, [], tree.over);
  const usage = usageSum(list);
  const status = result ? result.status : "running";
  return el(
    "div",
    { class: "subrun", "data-testid": "sub-run", "data-run-id": sub.id, "data-agent": sub.agent || "" },
    el("div", { class: "title" }, el("b", { "data-testid": "sub-agent" }, `sub-agent ${sub.agent || ""}`), badge(status, "sub-status")),
    el("div", { class: "muted", "data-testid": "sub-usage", "data-counted": String(tree.counted) }, `${usage.input_tokens} in · ${usage.cached_tokens} cached · ${usage.output_tokens} out · ${cost(usage)} ${COUNTED[tree.counted]}`),
    plan && plan.length ? el("div", { class: "plan", "data-testid": "sub-plan" }, planList(plan)) : null,
    stepsView(sub.id, tree, list)
  );
}

function timeline(run, all, result) {
  // A waterfall: one bar per model call, tool call and wait, placed by its start and duration;
  // of the steps drawn (a long run's latest: see stepsView)
  const { shown: list, hidden } = latest(run.run_id, all);
  const bars = [];
  const t = (iso) => (iso ? Date.parse(iso) : NaN);
  const now = Date.now();
  for (const s of list) {
    if (s.model && s.model.end)
      bars.push({ kind: "model", label: `step ${s.n} · ${s.model.model || "model"}`, start: t(s.model.start || run.started), end: t(s.model.end), status: "ok" });
    for (const c of s.calls) {
      if (c.request && c.decision)
        bars.push({ kind: "approval", label: `approval · ${c.tool}`, start: t(c.request.time), end: t(c.decision.time), status: c.decision.action });
      if (c.start)
        bars.push({ kind: "tool", label: c.tool, start: t(c.start), end: c.end ? t(c.end) : now, status: c.state });
    }
    for (const command of s.commands || [])
      if (command.type === "wait" && s.queued) bars.push({ kind: "wait", label: `wait ${command.seconds} s`, start: t(s.queued), end: t(s.queued) + command.seconds * 1000, status: "ok" });
    for (const n of s.notes)
      if (n.kind === "humanInput" && n.start) bars.push({ kind: "person", label: "waiting for a person", start: t(n.start), end: t(n.end), status: "ok" });
  }
  if (result && result.parkedAt && PARKED.includes(run.status))
    bars.push({ kind: "parked", label: "parked: waits for a person", start: t(result.parkedAt), end: now, status: "waiting" });
  const good = bars.filter((b) => !Number.isNaN(b.start) && !Number.isNaN(b.end));
  if (!good.length) return el("p", { class: "muted" }, "Nothing timed yet.");
  const t0 = Math.min(...good.map((b) => b.start));
  const t1 = Math.max(...good.map((b) => b.end), t0 + 1);
  const calls = good.filter((b) => b.kind === "model" || b.kind === "tool");
  const slowest = calls.reduce((a, b) => (!a || b.end - b.start > a.end - a.start ? b : a), null);
  return el(
    "div",
    { class: "timeline", "data-testid": "timeline" },
    hidden ? el("div", { class: "muted", "data-testid": "timeline-latest" }, `the latest ${number(list.length)} steps of ${number(all.length)}`) : null,
    el("div", { class: "axis muted" }, el("span", {}, "0"), el("span", {}, ms((t1 - t0) / 1000))),
    good.map((b) => {
      const left = ((b.start - t0) / (t1 - t0)) * 100;
      const width = Math.max(((b.end - b.start) / (t1 - t0)) * 100, 0.5);
      const isSlowest = b === slowest;
      const bar = el("span", { class: `bar ${b.kind} ${b.status}` });
      // set through the CSSOM: the content security policy refuses inline style attributes
      bar.style.left = `${left.toFixed(2)}%`;
      bar.style.width = `${Math.min(width, 100 - left).toFixed(2)}%`;
      return el(
        "div",
        { class: `bar-row${isSlowest ? " slowest" : ""}`, "data-testid": "bar", "data-kind": b.kind, "data-status": b.status, "data-slowest": isSlowest ? "true" : null, title: `${b.label}: ${ms((b.end - b.start) / 1000)}` },
        el("span", { class: "bar-label" }, b.label, isSlowest ? " · slowest" : ""),
        el("span", { class: "bar-track" }, bar),
        el("span", { class: "bar-time", "data-testid": "bar-duration" }, ms((b.end - b.start) / 1000))
      );
    })
  );
}

function origin(run) {
  const t = run.trigger;
  if (!t || !t.kind) return run.run_id.includes(".") ? "a sub-agent's run" : "started from Python (no trigger recorded)";
  const details = Object.entries(t)
    .filter(([key, value]) => key !== "kind" && value !== null && value !== "" && typeof value !== "object")
    .map(([key, value]) => `${cut(key, 40)} ${cut(value, 200)}`);
  return `${cut(t.kind, 40)}${details.length ? ` · ${details.join(" · ")}` : ""}`;
}

function cut(value, most) {
  // a short field from outside (a sender's name, a trigger's detail) at most `most` characters
  const s = String(value);
  return s.length > most ? `${s.slice(0, most)}… (${number(s.length)} characters)` : s;
}

function callerView(run) {
  // a nested run's page links the run it nests in (the server reads it from its trigger or id)
  if (typeof run.caller !== "string" || !run.caller) return null;
  return el(
    "div",
    { class: "muted", "data-testid": "run-caller" },
    "nested in run ",
    el("a", { href: `#run=${encodeURIComponent(run.caller)}`, "data-testid": "caller-link", "data-run-id": run.caller }, cut(run.caller, 200))
  );
}

function nestedKind(n) {
  // what a nested run is: a guardrail agent's run judging a step, or a tool call's (n-th) run
  const step = Number.isInteger(n.step) ? `step ${n.step}` : "a step";
  const call = Number.isInteger(n.index) ? `call ${n.index}` : "a call";
  if (n.kind === "guardrail") {
    const stage = String(n.stage || "").replace(/_/g, " ");
    const of = stage.startsWith("tool") ? `${step}'s ${call}` : step;
    return `guardrail ${cut(n.guardrail, 80)} judging ${stage} at ${of}`;
  }
  return `${Number(n.nth) > 1 ? `run ${number(n.nth)} of ` : ""}${step}'s ${call}`;
}

const NESTED_COUNTED = {
  // whether a nested run's spend is in its caller's totals (as `openmolt logs` shows each row's own)
  yes: "counted in its caller's totals",
  no: "not in its caller's totals: the tool that ran it did not add its usage",
  later: "counted in its caller's totals when its call ends",
};

function nestedView(run, tree) {
  // every run nested in this one, at any depth, from the store: a tool call's runs and its
  // guardrail agents' (whose events stay their own: only here can one reach them)
  const rows = Array.isArray(run.nested) ? run.nested.filter((n) => n && typeof n === "object") : [];
  if (!rows.length) return null;
  return [
    el("h3", {}, "Nested runs"),
    el(
      "ul",
      { class: "nested", "data-testid": "nested-runs" },
      rows.map((n) => {
        const counted = n.counted === true ? "yes" : n.caller === run.run_id ? tree.counted : null;
        return el(
          "li",
          { "data-testid": "nested-run", "data-run-id": n.run_id, "data-kind": n.kind },
          el("a", { href: `#run=${encodeURIComponent(String(n.run_id))}`, "data-testid": "nested-link" }, cut(n.agent, 80)),
          " ",
          badge(String(n.status || "running")),
          el("span", { class: "muted", "data-testid": "nested-kind" }, ` ${nestedKind(n)}${n.caller && n.caller !== run.run_id ? ` of run ${cut(n.caller, 200)}` : ""}`),
          el(
            "div",
            { class: "muted", "data-testid": "nested-cost", "data-counted": counted },
            `${quantity(n.steps || 0, "step")} · ${tokens(n.usage)} tokens · ${cost(n.usage)}${counted ? ` (${NESTED_COUNTED[counted]})` : ""}`
          )
        );
      })
    ),
    // the server lists the latest only (openmolt_core.runstore.NESTED_SHOWN): the others are found
    // by the list's filters, each marked with the run it nests in
    run.nested_more === true
      ? el("p", { class: "muted", "data-testid": "nested-more" }, `The latest ${number(rows.length)} only: the list's filters (agent, search) find the others, each marked nested in its run.`)
      : null,
  ];
}

function taintView(run) {
  // where the run's untrusted content came from (openmolt_core.taint), or why its outside
  // input did not make it untrusted: from the server (openmolt_ui._live.tainted_by, clean_start)
  const from = Array.isArray(run.tainted_by) ? run.tainted_by : [];
  const calls = Array.isArray(run.taint) ? run.taint.length : 0;
  const results = calls === 1 ? "1 call's result" : `${number(calls)} calls' results`;
  let text = "";
  if (from.length) text = `Untrusted content: it started tainted by ${from.map((f) => cut(f, 300)).join("; ")}${calls ? `; then by ${results} (marked below)` : ""}.`;
  else if (calls) text = `Untrusted content: tainted by ${results} (marked below)${run.clean_start ? `; it started clean: ${run.clean_start}` : ""}.`;
  else if (run.clean_start) text = `It started clean: ${run.clean_start}.`;
  if (!text) return null;
  return el("div", { class: `taint${from.length || calls ? " tainted" : ""}`, "data-testid": "run-taint" }, text);
}

function noSteps(run, tree) {
  // a run with no step drawn: one going on waits for its model; an ended one ran none
  if (!tree.over) return el("p", { class: "muted" }, "Waiting for the model…");
  const never = !tree.root.events.length && !run.steps;
  return el("p", { class: "muted", "data-testid": "no-steps" }, never ? "No step ran: the run did not start." : "No step ran.");
}

function resumeFailed(run, result, list) {
  // its last drive ended parked, and the run ended in error since with no later step: a resume
  // (a durable run's segment) failed going on from the park, which a durable store keeps
  if (!result || !result.parkedAt || !["error", "killed"].includes(run.status)) return null;
  if (list.some((s) => s.n > result.parkedStep)) return null; // it went on past the park

  const step = Number.isInteger(result.parkedStep) && result.parkedStep > 0 ? ` at step ${result.parkedStep}` : "";
  return el(
    "div",
    { class: "card error", "data-testid": "run-resume-failed" },
    `It was parked${step} (${String(result.status).replace(/_/g, " ")}), then going on from there failed (the error above). `,
    "A durable run's park is still good: giving the answer, decision or delivery again goes on from it. A call the failed attempt began shows as interrupted: it may have taken effect."
  );
}

function parkedView(run) {
  // what it waits for comes from the server (openmolt_ui._waiting), for every way a run parks
  return el(
    "div",
    { class: "card parked", "data-testid": "run-parked" },
    el("b", {}, "Parked. "),
    `It waits for ${run.waiting_for || "someone"}`,
    el("div", { class: "muted", "data-testid": "run-parked-how" }, ["human_input", "approval"].includes((run.pending || {}).kind)
      ? answeredBy((run.trigger || {}).kind, run.pending.kind) || HERE
      : "The application that parked it resumes it (agent.resume(state, ...)); it is listed under “Waiting for you”.")
  );
}

function renderRun() {
  try {
    drawRun();
  } catch (error) {
    // never a blank page: what the run recorded is still shown, as it was recorded
    document.getElementById("run").replaceChildren(...nodes([
      el("div", { class: "card error", "data-testid": "run-unreadable" }, `This run could not be drawn (${error.message}); its events as recorded:`),
      long({ "data-testid": "run-events" }, json(selected.events)),
    ]));
  }
}

function drawRun() {
  const main = document.getElementById("run");
  const run = selected.run;
  if (!run) {
    main.replaceChildren(el("p", { class: "muted" }, selected.id ? "Loading…" : "Choose a run."));
    return;
  }
  const tree = runTree(run.run_id, selected.events);
  tree.over = ["running", "waiting"].includes(run.status) || PARKED.includes(run.status) ? null : run.ended || run.updated;
  const { list, result, plan: planned } = steps(tree.root.events, run.taint, tree.over, run.stored);
  tree.counted = countedIn(run, tree, list);
  // a live run carries its plan; a stored one's comes from its own events
  const plan = (run.plan && run.plan.length ? run.plan : planned || (result && result.plan)) || [];
  const usage = run.usage || {};
  const link = `${location.pathname}?${AUTH}#run=${encodeURIComponent(run.run_id)}`;
  const parked = PARKED.includes(run.status) && Boolean(run.waiting_for);
  main.replaceChildren(...nodes([
    el(
      "div",
      { class: "title" },
      el("h2", { "data-testid": "run-agent" }, run.agent),
      badge(run.status, "run-status")
    ),
    el("div", { class: "muted" }, `${run.model} · run ${run.run_id} · started `, el("span", { "data-testid": "run-started", "data-time": run.started }, when(run.started))),
    el("div", { class: "muted" }, "from ", el("span", { "data-testid": "run-origin" }, origin(run))),
    callerView(run),
    run.user
      ? el("div", { class: "muted" }, "for end user ", el("b", { "data-testid": "run-user" }, cut(run.user, 200)), " (its accounts, its long-term memory)")
      : null,
    taintView(run),
    el(
      "div",
      { class: "links" },
      el("a", { href: link, "data-testid": "run-link" }, "Link to this run"),
      el("a", { href: `/api/runs/${encodeURIComponent(run.run_id)}/export?${AUTH}`, download: `run-${run.run_id}.json`, "data-testid": "run-export" }, "Export as JSON")
    ),
    el(
      "div",
      { class: "stats" },
      el("div", {}, el("span", {}, "steps"), el("b", { "data-testid": "run-steps" }, run.steps)),
      el("div", {}, el("span", {}, "tokens in"), el("b", { "data-testid": "tokens-in" }, usage.input_tokens || 0)),
      el("div", {}, el("span", {}, "cached"), el("b", { "data-testid": "tokens-cached" }, usage.cached_tokens || 0)),
      el("div", {}, el("span", {}, "tokens out"), el("b", { "data-testid": "tokens-out" }, usage.output_tokens || 0)),
      el("div", {}, el("span", {}, "cost"), el("b", { "data-testid": "run-cost" }, cost(usage)))
    ),
    usageByModel(run.usage_by_model),
    parked ? parkedView(run) : null,
    !parked && run.error ? el("div", { class: "card error", "data-testid": "run-error" }, long({}, run.error)) : null,
    resumeFailed(run, result, list),
    run.status === "cancelled" && !run.error
      ? el("div", { class: "card error", "data-testid": "run-error" }, "Cancelled: the run was stopped before it ended; a call still running then did not finish.")
      : null,
    el("h3", {}, "Input"),
    long({ "data-testid": "run-input" }, typeof run.input === "string" ? run.input : json(run.input)),
    el("h3", {}, "Plan"),
    plan.length ? el("div", { class: "plan", "data-testid": "plan" }, planList(plan)) : el("p", { class: "muted" }, "No plan yet."),
    run.output !== null && run.output !== undefined
      ? [el("h3", {}, "Output"), long({ "data-testid": "run-output" }, json(run.output))]
      : null,
    nestedView(run, tree),
    el("h3", {}, "Timeline"),
    timeline(run, list, result),
    el("h3", {}, "Steps"),
    list.length ? null : noSteps(run, tree),
    stepsView(run.run_id, tree, list)
  ]));
}

// the overview: tokens and cost per agent and per day -------------------------------------------

function showPage(name) {
  for (const page of ["runs", "overview"]) {
    document.getElementById(`page-${page}`).hidden = page !== name;
    document.getElementById(`nav-${page}`).classList.toggle("current", page === name);
  }
}

function number(n) {
  return Number(n || 0).toLocaleString("en-US");
}

function svg(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

function svgChart(days, key) {
  // A small inline SVG bar chart (no library, no CDN: the page is served offline).
  const width = 600;
  const height = 120;
  const max = Math.max(...days.map((d) => d[key] || 0), 0) || 1;
  const step = width / Math.max(days.length, 1);
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", "data-testid": "chart", role: "img", "aria-label": `${key === "cost_usd" ? "cost" : "tokens"} per day` });
  days.forEach((d, i) => {
    const h = Math.round(((d[key] || 0) / max) * (height - 20));
    const bar = svg("rect", { x: i * step + 2, y: height - 14 - h, width: Math.max(step - 4, 1), height: Math.max(h, 1), "data-testid": "chart-bar", "data-day": d.day });
    const title = svg("title", {});
    title.textContent = `${d.day}: ${key === "cost_usd" ? cost(d) : number(d[key])}`;
    bar.append(title);
    chart.append(bar);
    if (i === 0 || i === days.length - 1) {
      const label = svg("text", { x: i * step + 2, y: height - 2, class: "chart-label" });
      label.textContent = d.day.slice(5);
      chart.append(label);
    }
  });
  return chart;
}

async function renderOverview() {
  const box = document.getElementById("overview");
  box.replaceChildren(el("p", { class: "muted" }, "Loading…"));
  let data;
  try {
    data = await getJSON(`/api/overview?days=${document.getElementById("overview-days").value}`);
  } catch (error) {
    box.replaceChildren(el("p", { class: "error-text" }, error.message));
    return;
  }
  const key = data.days.some((d) => d.cost_usd) ? "cost_usd" : "tokens";
  const table = (rows, first, testid) =>
    el(
      "table",
      { "data-testid": testid },
      el("thead", {}, el("tr", {}, el("th", {}, first), el("th", {}, "runs"), el("th", {}, "tokens in"), el("th", {}, "tokens out"), el("th", {}, "cost"))),
      el(
        "tbody",
        {},
        rows.map((r) =>
          el("tr", { "data-testid": `${testid}-row`, "data-key": r.agent || r.day },
            el("td", {}, r.agent || r.day), el("td", {}, number(r.runs)), el("td", {}, number(r.input_tokens)),
            el("td", {}, number(r.output_tokens)), el("td", { "data-testid": "row-cost" }, cost(r)))
        )
      )
    );
  box.replaceChildren(...nodes([
    el("h3", {}, `${key === "cost_usd" ? "Cost" : "Tokens"} per day`),
    svgChart(data.days, key),
    el("h3", {}, "Per agent"),
    data.agents.length ? table(data.agents, "agent", "per-agent") : el("p", { class: "muted" }, "No runs in this period."),
    el("h3", {}, "Per day"),
    table(data.days.filter((d) => d.runs), "day", "per-day"),
  ]));
}

// wiring ----------------------------------------------------------------------------------------

function connect() {
  const status = document.getElementById("connection");
  const stream = new EventSource(`/api/stream?${AUTH}`);
  stream.addEventListener("open", () => {
    status.textContent = "live";
    status.className = "badge success";
  });
  stream.addEventListener("error", () => {
    status.textContent = "reconnecting…";
    status.className = "badge waiting";
  });
  stream.addEventListener("state", (e) => renderState(JSON.parse(e.data)));
  stream.addEventListener("end", () => {
    stream.close();
    status.textContent = "viewer stopped";
    status.className = "badge cancelled";
  });
}

document.getElementById("filters").addEventListener("submit", (e) => {
  e.preventDefault();
  readFilters();
});
document.getElementById("filters").addEventListener("change", readFilters);
document.getElementById("older").addEventListener("click", () => loadRuns(true));
document.getElementById("nav-runs").addEventListener("click", () => showPage("runs"));
document.getElementById("nav-overview").addEventListener("click", () => {
  showPage("overview");
  renderOverview();
});
document.getElementById("overview-days").addEventListener("change", renderOverview);

const wanted = new URLSearchParams(location.hash.slice(1)).get("run");
if (wanted) select(wanted);
window.addEventListener("hashchange", () => {
  // a link to another run of this viewer (#run=ID) opens it
  const runId = new URLSearchParams(location.hash.slice(1)).get("run");
  if (runId && runId !== selected.id) select(runId);
});
connect();
