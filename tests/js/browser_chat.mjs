// Drives ai_chat's chat page in headless Debian Chromium through playwright-core.
//
//   node tests/js/browser_chat.mjs <base-url> [<chromium-path>] [page|store|token <token>]
//
// With "store", the server keeps conversations (create_chat_app(..., store=...)) and the
// script checks them instead: it sends, reloads the page and reads the restored
// conversation and the list, starts a new chat, switches back through the list,
// continues the restored chat, and reloads again.
//
// With "token <token>", the server keeps conversations and requires that token: the
// script answers the page's token form with a wrong token, then the right one, sends,
// reloads (the tab keeps the token), and opens a second tab (which asks again).
//
// The page at <base-url>/ must talk to an /api/chat whose adapter answers:
//   "Hello"             the scripted default answer (reasoning, text, a tool call) with
//                       the tool's output added;
//   "slow ..."          text that streams slowly, for long enough to be stopped;
//   "fail"              some text, then an error;
//   anything else       the scripted default answer;
// and must refuse request bodies over 64 KiB (max_body_bytes=65536).
// The script sends those, stops the slow one mid-way, and prints what it saw as one JSON
// object on stdout (tests/browser/test_chat_page.py makes the assertions). Any failure
// to drive the page exits with status 1 and the reason on stderr.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [base, executablePath = "/usr/bin/chromium", scenario = "page", token = ""] =
  process.argv.slice(2);
if (!base) {
  console.error("usage: node browser_chat.mjs <base-url> [<chromium-path>]");
  process.exit(2);
}
// Hang guard for every wait, never a performance assertion.
const TIMEOUT = 30_000;
const XSS = '<img src=x onerror="window.__xss = 1"><b>bold</b>';

const profile = mkdtempSync(join(tmpdir(), "ai-chat-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  timeout: TIMEOUT,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

try {
  const result =
    scenario === "store" ? await driveStore(context) :
      scenario === "token" ? await driveToken(context, token) : await drive(context);
  process.stdout.write(JSON.stringify(result) + "\n");
} catch (error) {
  console.error(error && error.stack ? error.stack : String(error));
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}

async function drive(context) {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(TIMEOUT);
  const problems = watchProblems(page);
  const requests = [];
  page.on("request", (request) => {
    if (request.method() === "POST") {
      requests.push({ url: request.url(), headers: request.headers(), body: request.postData() });
    }
  });

  const loaded = await page.goto(base + "/");
  const pageStatus = loaded.status();
  const contentType = loaded.headers()["content-type"];
  await page.waitForSelector("body[data-status=ready]");

  // Watch the assistant text grow: one entry per DOM change while an answer streams.
  await page.evaluate(() => {
    window.__lengths = [];
    const log = document.getElementById("log");
    new MutationObserver(() => {
      const answers = log.querySelectorAll(".message.assistant");
      const last = answers[answers.length - 1];
      const text = last ? last.querySelector(".text") : null;
      window.__lengths.push(text ? text.textContent.length : 0);
    }).observe(log, { subtree: true, childList: true, characterData: true });
  });

  // 1. A complete answer: streamed text, reasoning, a tool call with input and output.
  const first = await send(page, "Hello");
  const lengths = await page.evaluate(() => window.__lengths);
  const answer = page.locator(".message.assistant").nth(0);
  const reasoning = answer.locator("details.reasoning");
  const tool = answer.locator(".tool");
  const hello = {
    ...first,
    lengths,
    reasoningOpen: await reasoning.evaluate((node) => node.open),
    reasoningSummary: await reasoning.locator("summary").textContent(),
    reasoningText: await reasoning.locator(".reasoning-text").textContent(),
    reasoningVisible: await reasoning.locator(".reasoning-text").isVisible(),
    toolName: await tool.locator(".tool-name").textContent(),
    toolState: await tool.getAttribute("data-state"),
    toolInput: await tool.locator(".tool-input").textContent(),
    toolOutput: await tool.locator(".tool-output").textContent(),
    toolOutputVisible: await tool.locator(".tool-output").isVisible(),
    finish: await answer.locator(".finish").textContent(),
  };

  // 2. A slow answer, stopped mid-way with the stop button.
  await page.fill("#input", "slow answer please");
  await page.press("#input", "Enter");
  const slowAnswer = page.locator(".message.assistant").nth(1);
  await page.waitForSelector("body[data-status=streaming]");
  await page.waitForFunction(() => {
    const answers = document.querySelectorAll(".message.assistant .text");
    const text = answers.length > 1 ? answers[answers.length - 1].textContent : "";
    return text.trim().split(/\s+/).length >= 5;
  });
  const stopEnabled = await page.isEnabled("#stop");
  await page.click("#stop");
  await page.waitForSelector("body[data-status=stopped]");
  const textAtStop = await slowAnswer.locator(".text").textContent();
  // Nothing may arrive after the stop: the fetch was aborted. (A settle wait, not a timing check.)
  await page.waitForTimeout(300);
  const slow = {
    textAtStop,
    textLater: await slowAnswer.locator(".text").textContent(),
    notice: await slowAnswer.locator(".notice").textContent(),
    status: await page.textContent("#status"),
    stopEnabledWhileStreaming: stopEnabled,
    stopEnabledAfter: await page.isEnabled("#stop"),
    sendEnabledAfter: await page.isEnabled("#send"),
  };

  // 3. An answer that fails mid-way.
  const failed = await send(page, "fail", "error");
  const failAnswer = page.locator(".message.assistant").nth(2);
  const error = {
    ...failed,
    alert: await failAnswer.locator("[role=alert]").textContent(),
    text: await failAnswer.locator(".text").textContent(),
  };

  // 4. Markup in the user's text is shown as text, never parsed (the answer echoes it).
  const echoed = await send(page, XSS);
  const lastAnswer = page.locator(".message.assistant").nth(3);
  const markup = {
    ...echoed,
    userText: await page.locator(".message.user .text").nth(3).textContent(),
    answerText: await lastAnswer.locator(".text").textContent(),
    toolInput: await lastAnswer.locator(".tool-input").textContent(),
    elements: await page.evaluate(() => document.querySelectorAll("#log img, #log b").length),
    xss: await page.evaluate(() => window.__xss === 1),
  };

  // 5. A request the server refuses (over its body size limit) shows the server's reason.
  const refused = await send(page, "x".repeat(70_000), "error");
  const refusedAnswer = page.locator(".message.assistant").nth(4);
  const tooLarge = {
    ...refused,
    alert: await refusedAnswer.locator("[role=alert]").textContent(),
    parts: await refusedAnswer.locator(".parts > *").count(),
  };

  return {
    pageStatus,
    tooLarge,
    contentType,
    hello,
    slow,
    error,
    markup,
    messages: await page.locator(".message").count(),
    requests,
    problems,
  };
}

// The console errors and warnings and the script errors of `page`, as they happen.
function watchProblems(page) {
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push("page error: " + error.message));
  return problems;
}

// Types a message, sends it with Enter, and waits for the page to settle in `expected`.
async function send(page, text, expected = "ready") {
  const answers = page.locator(".message.assistant");
  const before = await answers.count();
  await page.fill("#input", text);
  await page.press("#input", "Enter");
  await page.waitForFunction(
    (count) =>
      document.querySelectorAll(".message.assistant").length > count &&
      ["ready", "error", "stopped"].includes(document.body.dataset.status),
    before,
  );
  const status = await page.evaluate(() => document.body.dataset.status);
  if (status !== expected) {
    const shown = await page.textContent("#log");
    throw new Error(`after sending ${JSON.stringify(text)} the page is ${status}, not ${expected}: ${shown}`);
  }
  const last = answers.nth(before);
  const texts = last.locator(".text");
  return { status, text: (await texts.count()) ? await texts.first().textContent() : null };
}

// What the page shows: each message's role and texts, the tool parts, the list of chats.
async function shown(page) {
  return await page.evaluate(() => ({
    hash: location.hash,
    status: document.body.dataset.status,
    listHidden: document.getElementById("chats").hidden,
    messages: Array.from(document.querySelectorAll("#log .message"), (node) => ({
      role: node.dataset.role,
      texts: Array.from(node.querySelectorAll(".text"), (text) => text.textContent),
      reasoning: Array.from(node.querySelectorAll(".reasoning-text"), (r) => r.textContent),
      tools: Array.from(node.querySelectorAll(".tool"), (tool) => ({
        name: tool.querySelector(".tool-name").textContent,
        state: tool.dataset.state,
        input: tool.querySelector(".tool-input").textContent,
        output: tool.querySelector(".tool-output").textContent,
      })),
    })),
    chats: Array.from(document.querySelectorAll("#chat-links a"), (link) => ({
      title: link.textContent,
      href: link.getAttribute("href"),
      current: link.getAttribute("aria-current"),
    })),
  }));
}

async function settled(page, messages) {
  await page.waitForFunction(
    (count) =>
      document.querySelectorAll("#log .message").length === count &&
      document.body.dataset.status === "ready",
    messages,
  );
}

async function driveStore(context) {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(TIMEOUT);
  const problems = watchProblems(page);
  const requests = [];
  page.on("request", (request) => {
    if (request.method() === "POST") requests.push(JSON.parse(request.postData()));
  });

  await page.goto(base + "/");
  await page.waitForSelector("body[data-status=ready]");
  const empty = await shown(page);

  // 1. A first chat, then a reload: the conversation comes back from the server.
  await send(page, "Hello");
  await page.waitForFunction(() => document.querySelectorAll("#chat-links a").length === 1);
  const sent = await shown(page);
  await page.reload();
  await settled(page, 2);
  const reloaded = await shown(page);

  // 2. A new chat: an empty log, a new id; the list then holds both chats.
  await page.click("#new-chat");
  await settled(page, 0);
  const fresh = await shown(page);
  await send(page, "Second chat");
  await page.waitForFunction(() => document.querySelectorAll("#chat-links a").length === 2);
  const second = await shown(page);

  // 3. Back to the first chat through the list, and a follow-up question in it.
  await page.click("#chat-links a >> text=Hello");
  await page.waitForFunction((hash) => location.hash === hash, sent.hash);
  await settled(page, 2);
  const switched = await shown(page);
  await send(page, "And more");
  await page.reload();
  await settled(page, 4);
  const continued = await shown(page);

  return { empty, sent, reloaded, fresh, second, switched, continued, requests, problems };
}

async function driveToken(context, token) {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(TIMEOUT);
  const problems = watchProblems(page);
  const calls = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith("/api/")) {
      calls.push({ method: request.method(), path: url.pathname,
        authorization: request.headers().authorization || null });
    }
  });
  const form = async (which = page) => ({
    visible: await which.isVisible("#token-form"),
    note: await which.textContent("#token-note"),
    status: await which.evaluate(() => document.body.dataset.status),
  });

  // 1. The page asks before it makes any request.
  await page.goto(base + "/");
  await page.waitForSelector("#token-form", { state: "visible" });
  const asked = { ...(await form()), calls: calls.length };

  // 2. A wrong token: the server answers 401 and the page asks again, saying so.
  await page.fill("#token-input", "a-wrong-token-0000000000");
  await page.click("#token-submit");
  await page.waitForFunction(() => document.getElementById("token-note").textContent !== "");
  const wrong = await form();

  // 3. The right token: the answer streams; the token stays in this tab only.
  await page.fill("#token-input", token);
  await page.press("#token-input", "Enter");
  await page.waitForSelector("#token-form", { state: "hidden" });
  const answered = await send(page, "Hello");
  await page.waitForFunction(() => document.querySelectorAll("#chat-links a").length === 1);
  const kept = await page.evaluate(() => ({
    session: sessionStorage.getItem("ai-chat-token"),
    local: localStorage.length,
    cookie: document.cookie,
  }));

  // 4. A reload does not ask again: the conversation comes back with the token.
  await page.reload();
  await settled(page, 2);
  const reloaded = { ...(await form()), shown: await shown(page) };

  // 5. Another tab asks again (sessionStorage belongs to one tab).
  const other = await context.newPage();
  other.setDefaultTimeout(TIMEOUT);
  await other.goto(base + "/");
  await other.waitForSelector("#token-form", { state: "visible" });
  const otherTab = {
    ...(await form(other)),
    session: await other.evaluate(() => sessionStorage.getItem("ai-chat-token")),
  };
  await other.close();

  const cookies = (await context.cookies(base)).map((c) => ({
    name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite, path: c.path,
  }));
  return { asked, wrong, answered, kept, reloaded, otherTab, calls, cookies, problems };
}

