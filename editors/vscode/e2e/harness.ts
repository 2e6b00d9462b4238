// The e2e harness: starts code-server with the packaged extension installed,
// opens it in Debian's Chromium through playwright-core, and gives the suite
// the moves a person makes (the command palette, input boxes, notifications,
// the chat view's frame). Run by e2e_test.go, which sets the CTXLS_E2E_*
// variables.
import { ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { Browser, chromium, Frame, Locator, Page } from "playwright-core";

export function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run the suite through go test ./editors/vscode)`);
  return v;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls f until it returns a truthy value. */
export async function until<T>(what: string, f: () => Promise<T> | T, ms = 15000, every = 100): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await f();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(every);
  }
}

export function check(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

export interface Layout {
  root: string;
  home: string;
  userData: string;
  extensions: string;
  workspace: string;
  dataDir: string;
  outside: string;
}

export class Editor {
  page!: Page;
  private browser?: Browser;
  private server?: ChildProcess;
  readonly logs: string[] = [];
  /** Content-Security-Policy violations reported in the page or its webviews. */
  readonly cspViolations: string[] = [];

  constructor(readonly layout: Layout, readonly artifacts: string) {}

  /** Installs the .vsix and starts code-server on the workspace, settings written first. */
  async start(settings: Record<string, unknown>): Promise<void> {
    const L = this.layout;
    const node = env("CTXLS_E2E_NODE");
    const entry = env("CTXLS_E2E_CODE_SERVER");
    fs.mkdirSync(path.join(L.userData, "User"), { recursive: true });
    fs.writeFileSync(path.join(L.userData, "User", "settings.json"), JSON.stringify(settings, null, 2));
    // PATH without any ctxls: the extension finds the daemon only through the setting.
    const PATH = [path.dirname(node), "/usr/local/bin", "/usr/bin", "/bin"].join(path.delimiter);
    // No provider from the environment the tests run in: the suite's settings name it (OPENAI_API_KEY empty, as a user without one has it).
    const baseEnv = { ...process.env, HOME: L.home, PATH, CTXLS_DATA_DIR: L.dataDir, XDG_DATA_HOME: path.join(L.home, ".local", "share"), OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: "", CTXLS_MODEL: "" };
    const inst = spawnSync(node, [entry, "--install-extension", env("CTXLS_E2E_VSIX"), "--extensions-dir", L.extensions, "--user-data-dir", L.userData], {
      env: baseEnv,
      encoding: "utf8",
      timeout: 120_000,
    });
    if (inst.status !== 0) throw new Error(`code-server --install-extension failed: ${inst.stdout}\n${inst.stderr}`);
    const port = await freePort();
    const log = fs.openSync(path.join(this.artifacts, "code-server.log"), "w");
    this.server = spawn(
      node,
      [entry, "--config", "/dev/null", "--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--user-data-dir", L.userData, "--extensions-dir", L.extensions,
        "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", L.workspace],
      { env: baseEnv, stdio: ["ignore", log, log] },
    );
    const base = `http://127.0.0.1:${port}`;
    await until("code-server's /healthz", async () => (await fetch(`${base}/healthz`)).ok, 60_000, 250);
    this.browser = await chromium.launch({ executablePath: env("CTXLS_E2E_CHROMIUM"), args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run", "--disable-background-timer-throttling", "--disable-renderer-backgrounding"] });
    const context = await this.browser.newContext({ viewport: { width: 1280, height: 800 }, permissions: ["clipboard-read", "clipboard-write"] });
    this.page = await context.newPage();
    // A link the chat view follows may open a browser tab beside the
    // workbench: code-server opens the http(s) links a webview follows,
    // besides the extension's own handling of the click. Chromium then
    // draws the workbench as a background page, about one frame a second,
    // and every later step crawls (the suite took twice as long). Close
    // such tabs at once and keep the workbench in front.
    context.on("page", (p) => {
      console.log(`     (closed a browser tab the workbench opened: ${p.url()})`);
      void p
        .close()
        .then(() => this.page.bringToFront())
        .catch(() => undefined);
    });
    this.page.on("console", (m) => {
      if (m.type() === "error") this.logs.push(`console: ${m.text()}`);
      if (/Content Security Policy/i.test(m.text())) this.cspViolations.push(`${m.location().url}: ${m.text()}`);
    });
    await this.page.goto(`${base}/?folder=${encodeURIComponent(L.workspace)}`);
    await this.page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    await this.page.locator(".statusbar").waitFor({ timeout: 60_000 });
  }

  async stop(): Promise<void> {
    await this.browser?.close().catch(() => undefined);
    if (this.server && this.server.exitCode === null) {
      this.server.kill("SIGTERM");
      await Promise.race([new Promise((r) => this.server!.once("exit", r)), sleep(5000)]);
      if (this.server.exitCode === null) this.server.kill("SIGKILL");
    }
  }

  async shot(name: string): Promise<string> {
    const file = path.join(this.artifacts, `${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  // ---- the command palette and quick input ----

  quickInput(): Locator {
    return this.page.locator(".quick-input-widget");
  }

  /**
   * Runs a command from the palette by its title, as a person types it.
   * Right after a reload the workbench may close the palette under us (focus
   * moves while it settles) and keep its rows in the DOM, hidden: then the
   * whole sequence runs again.
   */
  async palette(title: string): Promise<void> {
    let tries = 0;
    await until(`running "${title}" from the palette`, async () => {
      tries++;
      const t0 = Date.now();
      try {
        await this.paletteOnce(title, tries === 1 ? 10_000 : 5_000);
      } catch (e) {
        console.log(`     (the palette's try ${tries} for "${title}" failed after ${Date.now() - t0} ms: ${e instanceof Error ? e.message.split("\n")[0] : e})`);
        throw e;
      }
      return true;
    }, 60_000, 200);
  }

  private async paletteOnce(title: string, clickTimeout: number): Promise<void> {
    await this.closeQuickInput();
    const input = this.quickInput().locator(".quick-input-box input");
    // Right after a (re)load the workbench may not take keys yet: press again.
    await this.pressUntil("the command palette", "F1", input, "visible", 3000, 20_000);
    await input.fill(`>${title}`);
    // Click the row of exactly that command (not a longer one that contains it).
    const rows = this.quickInput().locator(".monaco-list-row");
    const index = await until(`"${title}" in the palette`, async () => {
      const labels = await rows.evaluateAll((rs) => rs.map((r) => (r.getAttribute("aria-label") ?? "").split(",")[0].trim()));
      const i = labels.indexOf(title);
      return i >= 0 ? i + 1 : 0;
    }, 10_000);
    await rows.nth(index - 1).click({ timeout: clickTimeout });
  }

  /** Answers an input box (showInputBox) once it shows the prompt. */
  async answer(prompt: string | RegExp, text: string): Promise<void> {
    const w = this.quickInput();
    await w.waitFor({ state: "visible", timeout: 10_000 });
    await until(`the input box "${prompt}"`, async () => {
      const t = await w.innerText();
      return typeof prompt === "string" ? t.includes(prompt) : prompt.test(t);
    }, 10_000);
    const input = w.locator(".quick-input-box input");
    await input.fill(text);
    await input.press("Enter");
  }

  /** Waits for the settings editor (UI) to show with its search box focused, as it opens: typed text goes there. */
  async settingsOpened(): Promise<void> {
    await this.page.locator(".settings-editor .settings-header").first().waitFor({ timeout: 15_000 });
    await until("the settings editor's search box focused", () => this.page.evaluate(() => !!document.activeElement?.closest(".settings-editor .settings-header")), 10_000, 50);
  }

  /**
   * Types query into the settings editor's search box (settingsOpened
   * first), as a person types it, and again when the box does not hold all
   * of it: under load the editor may still reset its box while it loads (a
   * CI run's box held "der." of "ctxls.provider." and found no such row).
   */
  async searchSettings(query: string): Promise<void> {
    const box = this.page.locator(".settings-editor .settings-header .suggest-input-container .view-lines").first();
    const holds = async () => (await box.innerText()).replace(/\u00a0/g, " ").trim() === query;
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.type(query);
      try {
        await until(`"${query}" in the settings' search box`, holds, 3000, 100);
        return;
      } catch (e) {
        if (attempt === 3) throw e;
        console.log(`     (the settings' search box held "${await box.innerText().catch(() => "?")}" after typing "${query}": typed again)`);
      }
      await this.page.keyboard.press("Control+A");
      await this.page.keyboard.press("Backspace");
    }
  }

  /**
   * Closes the settings editor (VS Code 1.139 shows it in a modal editor)
   * with Escape; a first Escape may only leave an input, then another is
   * pressed once the editor has not closed within half a second.
   */
  async closeSettings(): Promise<void> {
    const editor = this.page.locator(".settings-editor").first();
    const escaped = await this.pressUntil("the settings editor closed", "Escape", editor, "hidden", 500, 5000).then(
      () => true,
      () => false,
    );
    if (escaped) return;
    // Escape did not reach it (it failed so once under the whole suite's
    // load): its close button, the nearest to the settings editor.
    await this.page.evaluate(() => {
      for (let el = document.querySelector(".settings-editor")?.parentElement; el; el = el.parentElement) {
        const close = el.querySelector<HTMLElement>('[aria-label^="Close"], .codicon-close');
        if (close) return close.click();
      }
    });
    await editor.waitFor({ state: "hidden", timeout: 5000 });
  }

  /** Presses key until locator is in state, waiting tryMs after each press, for at most totalMs. */
  private async pressUntil(what: string, key: string, locator: Locator, state: "visible" | "hidden", tryMs: number, totalMs: number): Promise<void> {
    await until(what, async () => {
      await this.page.keyboard.press(key);
      return locator.waitFor({ state, timeout: tryMs }).then(
        () => true,
        () => false,
      );
    }, totalMs, 0);
  }

  async closeQuickInput(): Promise<void> {
    if (await this.quickInput().isVisible()) {
      await this.page.keyboard.press("Escape");
      await this.quickInput().waitFor({ state: "hidden", timeout: 5000 }).catch(() => undefined);
    }
  }

  /** The rows the quick pick shows now (their aria labels). */
  async pickRows(): Promise<string[]> {
    return this.quickInput().locator(".monaco-list-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("aria-label") ?? r.textContent ?? ""));
  }

  // ---- notifications ----

  toasts(): Locator {
    return this.page.locator(".notifications-toasts .notification-toast");
  }

  async toast(text: string | RegExp, ms = 15_000): Promise<Locator> {
    const t = this.toasts().filter({ hasText: text }).first();
    await t.waitFor({ state: "visible", timeout: ms });
    return t;
  }

  async toastTexts(): Promise<string[]> {
    return this.toasts().locator(".notification-list-item-message").allInnerTexts();
  }

  async clearToasts(): Promise<void> {
    const n = await this.toasts().count();
    if (n === 0) return;
    await this.palette("Notifications: Clear All Notifications");
    await until("no notifications", async () => (await this.toasts().count()) === 0, 5000);
  }

  // ---- the status bar and editors ----

  async statusItem(): Promise<string> {
    return (await this.page.locator('.statusbar-item[id$="ctxls.status"]').first().innerText()).trim();
  }

  async statusItemHtml(): Promise<string> {
    return this.page.locator('.statusbar-item[id$="ctxls.status"]').first().innerHTML();
  }

  activeTab(): Locator {
    return this.page.locator(".tabs-container .tab.active").first();
  }

  async activeTabTitle(): Promise<string> {
    return (await this.activeTab().getAttribute("aria-label")) ?? "";
  }

  async tabTitles(): Promise<string[]> {
    return this.page.locator(".tabs-container .tab").evaluateAll((tabs) => tabs.map((t) => t.getAttribute("aria-label") ?? ""));
  }

  /** Opens a workspace file through Quick Open, as a person does, and puts the cursor in it. */
  async openFile(name: string): Promise<void> {
    const input = this.quickInput().locator(".quick-input-box input");
    const rows = this.quickInput().locator(".monaco-list-row");
    const found = async () => {
      const labels = await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute("aria-label") ?? ""));
      // Only once the list is filtered to what was typed.
      if (labels.some((l) => !l.toLowerCase().includes(name.toLowerCase().split(".")[0]))) return 0;
      const i = labels.findIndex((l) => l.startsWith(name));
      return i >= 0 ? i + 1 : 0;
    };
    // A file the test has just written may be missing from the file list
    // Quick Open loaded when it opened ("No matching results"): open it
    // again, as a person would, up to three times.
    let index = 0;
    for (let attempt = 1; index === 0; attempt++) {
      await this.closeQuickInput();
      // With a webview focused (an image preview) the key may not reach the
      // workbench the first time: press again, as the palette does.
      await this.pressUntil("Quick Open", "Control+P", input, "visible", 3000, 20_000);
      await input.fill(name);
      if (attempt === 3) index = await until(`${name} in Quick Open`, found);
      else index = await until(`${name} in Quick Open`, found, 5000).catch(() => 0);
    }
    await rows.nth(index - 1).click();
    await until(`${name} active`, async () => (await this.activeTabTitle()).startsWith(name));
    await this.focusEditor();
  }

  /** The text the active editor shows (Monaco draws spaces as no-break spaces). */
  async editorText(): Promise<string> {
    return (await this.page.locator(".editor-group-container.active .view-lines").first().innerText()).replace(/\u00a0/g, " ");
  }

  /** Puts the keyboard in the active text editor. */
  async focusEditor(): Promise<void> {
    const editor = this.page.locator(".editor-group-container.active .monaco-editor").first();
    await editor.waitFor();
    await until("the editor focused", async () => {
      if (await editor.evaluate((e) => e.contains(document.activeElement))) return true;
      await editor.locator(".view-lines").click({ position: { x: 5, y: 5 } });
      return false;
    }, 10_000, 200);
  }

  // ---- the chat view ----

  /** The chat view's document (a webview: an iframe inside an iframe). */
  async chat(ms = 20_000): Promise<Frame> {
    return until(
      "the chat view's frame",
      async () => {
        for (const f of this.page.frames()) {
          if (!f.url().includes("vscode-webview") && !f.url().includes("webview")) continue;
          try {
            if (await f.$("#composer")) return f;
          } catch {
            // a frame that went away
          }
        }
        return undefined;
      },
      ms,
      200,
    );
  }
}

export function makeLayout(): Layout {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ctxls-e2e-"));
  const L: Layout = {
    root,
    home: path.join(root, "home"),
    userData: path.join(root, "user-data"),
    extensions: path.join(root, "extensions"),
    workspace: path.join(root, "workspace"),
    dataDir: path.join(root, "ctxls-data"),
    outside: path.join(root, "outside"),
  };
  for (const d of Object.values(L)) fs.mkdirSync(d, { recursive: true });
  return L;
}
