// One prompt turn of `dsh acp` through acpx's runtime API, as an embedding host runs it
// (elicitationModes ["form"]): argv is STATE_DIR CWD PROMPT FORM_REPLY_JSON AGENT_ARGV...
// Prints one JSON line per elicitation received and, last, the turn's text and result.
import { createAcpRuntime, createAgentRegistry, createRuntimeStore } from "acpx/runtime";

const [stateDir, cwd, prompt, replyJson, ...agent] = process.argv.slice(2);
const runtime = createAcpRuntime({
  cwd,
  sessionStore: createRuntimeStore({ stateDir }),
  agentRegistry: createAgentRegistry({ overrides: { dsh: agent } }),
  permissionMode: "approve-all",
  elicitationModes: ["form"],
});
const handle = await runtime.ensureSession({ sessionKey: "test", agent: "dsh", mode: "oneshot", cwd });
let text = "";
const turn = runtime.startTurn({
  handle, text: prompt, mode: "prompt", requestId: "r1",
  onElicitation: async (request) => {
    console.log(JSON.stringify({ elicitation: request }));
    return JSON.parse(replyJson);
  },
});
for await (const event of turn.events) {
  if (event.type === "text_delta" && event.stream !== "thought") text += event.text;
}
const result = await turn.result;
console.log(JSON.stringify({ text, result }));
await runtime.shutdown();
