// Checks a recorded AG-UI event stream with the protocol's published TypeScript client
// (@ag-ui/client's verifyEvents: order, pairing, subagents). Reads the events as a JSON array on
// stdin; prints "ok", or the client's error and exits 1. NODE_PATH points at its node_modules.
const { verifyEvents } = require("@ag-ui/client");
const { from, lastValueFrom, toArray } = require("rxjs");

let input = "";
process.stdin.on("data", (chunk) => {
	input += chunk;
});
process.stdin.on("end", async () => {
	try {
		await lastValueFrom(from(JSON.parse(input)).pipe(verifyEvents(false), toArray()));
		console.log("ok");
	} catch (error) {
		console.error(error && error.message ? error.message : String(error));
		process.exit(1);
	}
});
