// The API key's variable, the daemon's environment and the no-provider
// message (apikey.ts): no VS Code or daemon needed.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { daemonEnv, daemonWordsHelp, keyClearedMessage, keyEnvName, keyProblem, keySetMessage, noProviderMessage } from "../src/apikey";

test("the key goes under the variable the daemon reads it from (chat/provider.go keyEnv after Resolve)", () => {
  assert.equal(keyEnvName({}, {}), "OPENAI_API_KEY");
  assert.equal(keyEnvName({ baseURL: "http://127.0.0.1:11434/v1" }, {}), "OPENAI_API_KEY");
  assert.equal(keyEnvName({ api: "anthropic" }, {}), "ANTHROPIC_API_KEY");
  assert.equal(keyEnvName({ api: "openai", baseURL: "https://api.anthropic.com" }, {}), "OPENAI_API_KEY");
  // An unset api is inferred from the base URL: the setting, else OPENAI_BASE_URL.
  assert.equal(keyEnvName({ baseURL: "https://API.anthropic.com/v1" }, {}), "ANTHROPIC_API_KEY");
  assert.equal(keyEnvName({}, { OPENAI_BASE_URL: "https://api.anthropic.com" }), "ANTHROPIC_API_KEY");
  assert.equal(keyEnvName({ baseURL: "http://localhost:8080/v1" }, { OPENAI_BASE_URL: "https://api.anthropic.com" }), "OPENAI_API_KEY");
  // No scheme: not a URL, so openai (Go's url.Parse gives no host either).
  assert.equal(keyEnvName({ baseURL: "api.anthropic.com/v1" }, {}), "OPENAI_API_KEY");
  // provider.apiKeyEnv wins over both.
  assert.equal(keyEnvName({ apiKeyEnv: "GROQ_API_KEY", api: "anthropic" }, {}), "GROQ_API_KEY");
});

test("the daemon's environment is VS Code's with the stored key in place of VS Code's own; none stored changes nothing", () => {
  const env = { PATH: "/usr/bin", OPENAI_API_KEY: "from-vscode", UNSET: undefined };
  assert.equal(daemonEnv(env, "OPENAI_API_KEY", undefined), undefined);
  assert.equal(daemonEnv(env, "OPENAI_API_KEY", ""), undefined);
  assert.deepEqual(daemonEnv(env, "OPENAI_API_KEY", "sk-stored"), { PATH: "/usr/bin", OPENAI_API_KEY: "sk-stored" });
  assert.deepEqual(daemonEnv(env, "ANTHROPIC_API_KEY", "sk-ant"), { PATH: "/usr/bin", OPENAI_API_KEY: "from-vscode", ANTHROPIC_API_KEY: "sk-ant" });
  assert.equal(env.OPENAI_API_KEY, "from-vscode", "VS Code's own environment changed");
});

test("a typed key is refused when empty or with spaces or controls", () => {
  assert.equal(keyProblem("sk-abc"), undefined);
  assert.equal(keyProblem("  sk-abc \n"), undefined); // trimmed when stored
  assert.match(keyProblem("   ") ?? "", /Paste the key/);
  assert.match(keyProblem("sk-a bc") ?? "", /no spaces/);
  assert.match(keyProblem("sk-a\u0007bc") ?? "", /control/);
});

test("the no-provider message names the key's variable, the command and the settings; the daemon's words only when something is set", () => {
  const m = noProviderMessage("OPENAI_API_KEY");
  for (const s of ["OPENAI_API_KEY", "ctxls: Set API Key", "ctxls.provider.baseURL", "ctxls.provider.model"]) assert.ok(m.includes(s), `${s} missing: ${m}`);
  assert.ok(m.length < 200, `${m.length} characters`);
  assert.ok(noProviderMessage("ANTHROPIC_API_KEY").includes("ANTHROPIC_API_KEY"));
  assert.equal(daemonWordsHelp({ model: "gpt-4o" }, {}, "OPENAI_API_KEY", false), false);
  assert.equal(daemonWordsHelp({}, { OPENAI_API_KEY: "" }, "OPENAI_API_KEY", false), false);
  assert.equal(daemonWordsHelp({ baseURL: "localhost:11434/v1" }, {}, "OPENAI_API_KEY", false), true);
  assert.equal(daemonWordsHelp({}, { OPENAI_BASE_URL: "http://x/v1" }, "OPENAI_API_KEY", false), true);
  assert.equal(daemonWordsHelp({ apiKeyEnv: "AWS_SECRET_KEY" }, {}, "AWS_SECRET_KEY", false), true);
  assert.equal(daemonWordsHelp({}, {}, "OPENAI_API_KEY", true), true);
});

test("what Set and Clear API Key say names the variable, never the key", () => {
  assert.equal(keySetMessage("OPENAI_API_KEY", {}), "ctxls: API key saved in VS Code's secret storage; the ctxls daemon now gets it as OPENAI_API_KEY.");
  assert.ok(keySetMessage("OPENAI_API_KEY", { OPENAI_API_KEY: "sk-env" }).includes("in place of the OPENAI_API_KEY of VS Code's environment"));
  assert.ok(!keySetMessage("OPENAI_API_KEY", { OPENAI_API_KEY: "sk-env" }).includes("sk-env"));
  assert.ok(keyClearedMessage("OPENAI_API_KEY", { OPENAI_API_KEY: "sk-env" }, true).includes("uses the OPENAI_API_KEY of VS Code's environment"));
  assert.ok(keyClearedMessage("OPENAI_API_KEY", {}, true).includes("ctxls: Set API Key"));
  assert.equal(keyClearedMessage("OPENAI_API_KEY", {}, false), "ctxls: no API key is kept in VS Code's secret storage.");
  // A workspace's apiKeyEnv: kept, not given, and the message says why.
  const notGiven = keySetMessage("GITHUB_TOKEN", {}, false);
  assert.ok(notGiven.includes("this workspace's settings") && notGiven.includes("GITHUB_TOKEN") && !notGiven.includes("now gets it"), notGiven);
});
