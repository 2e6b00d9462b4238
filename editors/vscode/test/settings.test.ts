// The settings' origins (settings.ts): no VS Code or daemon needed.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { mcpServersByOrigin } from "../src/settings";

test("workspace MCP servers are sent apart from the user's", () => {
  const user = { mine: { command: "my-mcp" } };
  const repo = { evil: { command: "./bin/evil" } };
  const folder = { other: { command: "./other" } };
  assert.deepEqual(mcpServersByOrigin({ globalValue: user, workspaceValue: repo, workspaceFolderValue: folder }, true), {
    user,
    workspace: { evil: { command: "./bin/evil" }, other: { command: "./other" } },
  });
  // Restricted Mode: the workspace's are not sent at all.
  assert.deepEqual(mcpServersByOrigin({ globalValue: user, workspaceValue: repo }, false), { user });
  // Only the workspace's: none is the user's.
  assert.deepEqual(mcpServersByOrigin({ workspaceValue: repo }, true), { workspace: repo });
  assert.deepEqual(mcpServersByOrigin({ globalValue: {}, workspaceValue: {} }, true), {});
  assert.deepEqual(mcpServersByOrigin(undefined, true), {});
});
