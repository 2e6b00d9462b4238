// The provider's API key as VS Code users give it (ctxls: Set API Key): kept
// in VS Code's SecretStorage, never in settings, and handed to the daemon
// alone, in its environment, under the variable the daemon reads the key
// from. The daemon keeps that variable out of its commands' and MCP
// servers' environments (tool/command.go commandEnv, mcpclient serverEnv).
// No vscode import: tested with node --test (test/apikey.test.ts).
import type { Provider } from "./protocol";

/** The SecretStorage key the API key is kept under. */
export const apiKeySecret = "ctxls.provider.apiKey";

/**
 * The environment variable the daemon reads the provider's key from, as
 * chat.Resolve decides it: provider.apiKeyEnv when set; else the API's
 * (ANTHROPIC_API_KEY for "anthropic", OPENAI_API_KEY otherwise), an unset
 * API being inferred from the base URL (the setting, else OPENAI_BASE_URL):
 * anthropic for api.anthropic.com.
 */
export function keyEnvName(p: Provider, env: Record<string, string | undefined>): string {
  if (p.apiKeyEnv) return p.apiKeyEnv;
  let api = p.api;
  if (!api) {
    let host = "";
    try {
      host = new URL(p.baseURL || env.OPENAI_BASE_URL || "").hostname.toLowerCase();
    } catch {
      // No URL, or not one: the daemon infers openai too.
    }
    api = host === "api.anthropic.com" ? "anthropic" : "openai";
  }
  return api === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}

/**
 * The daemon's environment: VS Code's, with the stored key under name (in
 * place of VS Code's own value). Undefined without a stored key: the daemon
 * inherits VS Code's environment as it is.
 */
export function daemonEnv(env: Record<string, string | undefined>, name: string, key: string | undefined): Record<string, string> | undefined {
  if (!key) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  out[name] = key;
  return out;
}

/** Why a typed key cannot be a key (the input box says it under the box), or undefined. */
export function keyProblem(typed: string): string | undefined {
  const k = typed.trim();
  if (!k) return "Paste the key (Escape leaves the key as it is).";
  if (/[\s\x00-\x1f\x7f]/.test(k)) return "An API key has no spaces, line breaks or control characters.";
  return undefined;
}

/** What a question refused for want of a usable provider (the daemon's kind noProvider) says, everywhere in VS Code. */
export function noProviderMessage(keyEnv: string): string {
  return `ctxls has no model to talk to yet: set your API key (ctxls: Set API Key) or ${keyEnv}, and ctxls.provider.baseURL / ctxls.provider.model for another server.`;
}

/**
 * Whether the daemon's own words for a noProvider error add to the
 * message: not when nothing names a provider at all (no base URL in the
 * settings or the environment, no key, no api), where they only list the
 * same variables again; yes when something is set and wrong (a base URL
 * without http://, a key variable the daemon refuses, a server with no model).
 */
export function daemonWordsHelp(p: Provider, env: Record<string, string | undefined>, keyEnv: string, storedKey: boolean): boolean {
  return !!(p.baseURL || p.api || p.apiKeyEnv || env.OPENAI_BASE_URL || env[keyEnv] || storedKey);
}

/**
 * What Set API Key says once the key is kept (never the key). given: the
 * daemon got it, under keyEnv; not when a workspace's settings name
 * provider.apiKeyEnv (see storedKeyEnv in config.ts).
 */
export function keySetMessage(keyEnv: string, env: Record<string, string | undefined>, given = true): string {
  if (!given) {
    return `ctxls: API key saved in VS Code's secret storage, but this workspace's settings name the key's variable (ctxls.provider.apiKeyEnv: ${keyEnv}): the daemon gets the key only under a variable of yours (your user settings' ctxls.provider.apiKeyEnv, or none).`;
  }
  const over = env[keyEnv] ? `, in place of the ${keyEnv} of VS Code's environment` : "";
  return `ctxls: API key saved in VS Code's secret storage; the ctxls daemon now gets it as ${keyEnv}${over}.`;
}

/** What Clear API Key says. */
export function keyClearedMessage(keyEnv: string, env: Record<string, string | undefined>, had: boolean): string {
  if (!had) return "ctxls: no API key is kept in VS Code's secret storage.";
  const now = env[keyEnv] ? `the daemon now uses the ${keyEnv} of VS Code's environment` : "set one again with ctxls: Set API Key";
  return `ctxls: API key removed from VS Code's secret storage; ${now}.`;
}
