// Drives an AG-UI endpoint with the protocol's published TypeScript client (@ag-ui/client):
// one run that ends on an interrupt, then a run that resumes it. Prints what the client saw as
// JSON. Usage: node agui_client.cjs URL TOKEN (NODE_PATH points at the node_modules holding it).
const { HttpAgent } = require("@ag-ui/client");

async function main() {
	const [url, token] = process.argv.slice(2);
	const agent = new HttpAgent({
		url,
		headers: { Authorization: `Bearer ${token}` },
		threadId: "ts-thread",
	});
	const seen = [];
	const states = [];
	const subscriber = {
		onEvent: ({ event }) => {
			seen.push(event.type);
		},
		onStateChanged: ({ state }) => {
			states.push(JSON.parse(JSON.stringify(state)));
		},
	};
	agent.addMessage({ id: "u1", role: "user", content: "Weather in Oslo this week?" });
	const first = await agent.runAgent({ runId: "run-1" }, subscriber);
	const interrupts = agent.pendingInterrupts.map((i) => ({
		id: i.id,
		reason: i.reason,
		message: i.message,
	}));
	const resume = [{ interruptId: interrupts[0].id, status: "resolved", payload: "Monday" }];
	const second = await agent.runAgent({ runId: "run-2", resume }, subscriber);
	console.log(
		JSON.stringify({
			seen,
			states,
			interrupts,
			firstResult: first.result ?? null,
			result: second.result ?? null,
			pending: agent.pendingInterrupts.length,
			state: agent.state,
			messages: agent.messages.map((m) => ({
				role: m.role,
				content: m.content ?? null,
				toolCalls: (m.toolCalls || []).map((c) => c.function.name),
			})),
		}),
	);
}

main().catch((error) => {
	console.error(error && error.stack ? error.stack : String(error));
	process.exit(1);
});
