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

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  node.append(...nodes(children));
  return node;
}

function nodes(items) {
  // Deeply flattened, without the empty values; strings and numbers become text.
  return items
    .flat(Infinity)
    .filter((item) => item !== undefined && item !== null && item !== false)
    .map((item) => (item instanceof Node ? item : document.createTextNode(String(item))));
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

function cost(usage) {
  if (!usage || usage.cost_usd === null || usage.cost_usd === undefined) return "unknown";
  return `$${usage.cost_usd.toFixed(4)}`;
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

// the list: runs, questions, approvals ------------------------------------------------------

function renderState(state) {
  lastState = state;
  const runs = document.getElementById("runs");
  runs.replaceChildren(
    ...nodes(state.runs.map((run) =>
      el(
        "li",
        {
          "data-testid": "run-item",
          "data-run-id": run.run_id,
          "data-status": run.status,
          class: run.run_id === selected.id ? "selected" : "",
          onclick: () => select(run.run_id),
        },
        el("div", { class: "line1" }, el("span", {}, run.agent), badge(run.status)),
        el(
          "div",
          { class: "line2" },
          `${when(run.started)} · ${run.steps} steps · ${tokens(run.usage)} tokens`
        )
      )
    ))
  );
  document.getElementById("no-runs").hidden = state.runs.length > 0;
  renderQuestions(state.questions);
  renderApprovals(state.approvals);
  document.getElementById("nothing-waits").hidden =
    state.questions.length + state.approvals.length > 0;
  if (!selected.id && state.runs.length) select(state.runs[0].run_id);
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
      const send = async () => {
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
        el("div", { class: "message", "data-testid": "question-message" }, q.message),
        answer,
        el("button", { class: "primary", "data-testid": "answer-send", onclick: send, disabled }, "Answer"),
        disabled ? el("div", { class: "muted" }, "Load this agent's file (openmolt ui AGENT_FILE) to answer.") : null,
        problem
      );
    }))
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
        el("div", { class: "message" }, el("b", { "data-testid": "approval-tool" }, a.tool)),
        a.reason ? el("div", { class: "message", "data-testid": "approval-why" }, a.reason) : null,
        a.rule ? el("div", { class: "who" }, `rule: ${a.rule}`) : null,
        el("div", { class: "label" }, "input"),
        input,
        reason,
        el("button", { class: "primary", "data-testid": "approve", onclick: () => decide("approve"), disabled }, "Approve"),
        el("button", { "data-testid": "approve-edited", onclick: () => decide("edit"), disabled }, "Approve with edits"),
        el("button", { class: "danger", "data-testid": "deny", onclick: () => decide("deny"), disabled }, "Deny"),
        disabled ? el("div", { class: "muted" }, "Load this agent's file (openmolt ui AGENT_FILE) to decide.") : null,
        problem
      );
    }))
  );
}

// one run: its plan, steps, commands and tool calls -----------------------------------------

function select(runId) {
  if (selected.stream) selected.stream.close();
  Object.assign(selected, { id: runId, events: [], run: null, stream: null });
  history.replaceState(null, "", `#run=${encodeURIComponent(runId)}`);
  const stream = new EventSource(`/api/runs/${encodeURIComponent(runId)}/stream?after=0&${AUTH}`);
  selected.stream = stream;
  stream.addEventListener("event", (e) => {
    selected.events.push(JSON.parse(e.data));
    renderRun();
  });
  stream.addEventListener("run", (e) => {
    selected.run = JSON.parse(e.data);
    renderRun();
  });
  stream.addEventListener("reset", () => {
    selected.events = [];
  });
  for (const name of ["gone", "end"]) stream.addEventListener(name, () => stream.close());
  renderState(lastState);
  renderRun();
}

function steps(events) {
  const byStep = new Map();
  const step = (n) => {
    if (!byStep.has(n)) byStep.set(n, { n, usage: null, commands: null, tools: [], notes: [] });
    return byStep.get(n);
  };
  let result = null;
  let plan = null;
  for (const event of events) {
    const d = event.data;
    if (event.name === "planUpdate") plan = d.plan;
    else if (event.name === "llmOutput") step(event.step).usage = d.usage;
    else if (event.name === "commandsQueued") step(event.step).commands = d.commands;
    else if (event.name === "tool:call")
      step(event.step).tools.push({ tool: d.tool, input: d.input, done: false });
    else if (event.name === "tool:response") {
      const s = step(event.step);
      const call = s.tools.find((t) => !t.done && t.tool === d.tool);
      const target = call || { tool: d.tool, input: d.input };
      Object.assign(target, { done: true, response: d.response, error: d.error, duration: d.duration });
      if (!call) s.tools.push(target);
    } else if (event.name === "humanInput")
      step(event.step).notes.push({ kind: "humanInput", text: `asked: ${d.message}\nanswer: ${d.response}` });
    else if (event.name === "error")
      step(event.step).notes.push({ kind: "error", text: `${d.kind}: ${d.message}` });
    else if (event.name === "memoryUpdate")
      step(event.step).notes.push({ kind: "memory", text: `${d.mode} ${d.memory}: ${d.data}` });
    else if (event.name === "finish") result = d.result;
  }
  return { list: [...byStep.values()].sort((a, b) => a.n - b.n), result, plan };
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

function toolView(call) {
  const status = !call.done ? "running" : call.error ? "failed" : "ok";
  return el(
    "div",
    { class: "command tool", "data-testid": "tool-call", "data-tool": call.tool, "data-status": status },
    el("span", { class: "kind" }, call.tool),
    " ",
    badge(status, "tool-status"),
    call.done ? el("span", { class: "duration" }, ` ${Math.round((call.duration || 0) * 1000)} ms`) : null,
    el("div", { class: "label" }, "input"),
    el("pre", { "data-testid": "tool-input" }, json(call.input)),
    call.done ? el("div", { class: "label" }, call.error ? "error" : "output") : null,
    call.done ? el("pre", { "data-testid": "tool-output" }, json(call.response)) : null
  );
}

function commandView(command) {
  if (command.type === "callTool") return null; // shown with its result, below
  let text = "";
  if (command.type === "finish") text = `${command.status}: ${command.humanMessage || ""}`;
  else if (command.type === "wait") text = `${command.seconds} s`;
  else if (command.type === "updatePlan") text = `${command.plan.length} plan steps`;
  else if (command.type === "updateMemory") text = `${command.mode} ${command.memory}`;
  else if (command.type === "requestHumanInput") text = command.message;
  return el(
    "div",
    { class: "command", "data-testid": "command", "data-type": command.type },
    el("span", { class: "kind" }, command.type),
    " ",
    text
  );
}

function renderRun() {
  const main = document.getElementById("run");
  const run = selected.run;
  if (!run) {
    main.replaceChildren(el("p", { class: "muted" }, selected.id ? "Loading…" : "Choose a run."));
    return;
  }
  const { list, result, plan: planned } = steps(selected.events);
  // a live run carries its plan; a stored one's comes from its events
  const plan = (run.plan && run.plan.length ? run.plan : planned || (result && result.plan)) || [];
  const usage = run.usage || {};
  main.replaceChildren(...nodes([
    el(
      "div",
      { class: "title" },
      el("h2", { "data-testid": "run-agent" }, run.agent),
      badge(run.status, "run-status")
    ),
    el("div", { class: "muted" }, `${run.model} · run ${run.run_id} · started ${when(run.started)}`),
    el(
      "div",
      { class: "stats" },
      el("div", {}, el("span", {}, "steps"), el("b", { "data-testid": "run-steps" }, run.steps)),
      el("div", {}, el("span", {}, "tokens in"), el("b", { "data-testid": "tokens-in" }, usage.input_tokens || 0)),
      el("div", {}, el("span", {}, "tokens out"), el("b", { "data-testid": "tokens-out" }, usage.output_tokens || 0)),
      el("div", {}, el("span", {}, "cost"), el("b", { "data-testid": "run-cost" }, cost(usage)))
    ),
    el("h3", {}, "Input"),
    el("pre", { "data-testid": "run-input" }, typeof run.input === "string" ? run.input : json(run.input)),
    el("h3", {}, "Plan"),
    plan.length ? el("div", { class: "plan", "data-testid": "plan" }, planList(plan)) : el("p", { class: "muted" }, "No plan yet."),
    run.error ? el("div", { class: "card", "data-testid": "run-error" }, run.error) : null,
    run.output !== null && run.output !== undefined
      ? [el("h3", {}, "Output"), el("pre", { "data-testid": "run-output" }, json(run.output))]
      : null,
    el("h3", {}, "Steps"),
    list.length ? null : el("p", { class: "muted" }, "Waiting for the model…"),
    list.map((s) =>
      el(
        "div",
        { class: "step", "data-testid": "step", "data-step": s.n },
        el(
          "div",
          { class: "head" },
          `Step ${s.n}`,
          s.usage ? el("span", { class: "tokens" }, `${s.usage.input_tokens} in · ${s.usage.output_tokens} out`) : null
        ),
        (s.commands || []).map(commandView),
        s.tools.map(toolView),
        s.notes.map((n) => el("div", { class: `command note ${n.kind}`, "data-testid": `note-${n.kind}` }, el("pre", {}, n.text)))
      )
    )
  ]));
}

// the list's stream --------------------------------------------------------------------------

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

const wanted = new URLSearchParams(location.hash.slice(1)).get("run");
if (wanted) select(wanted);
connect();
