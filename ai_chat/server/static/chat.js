// The chat page's script: ai_chat/server/_page.py inlines it into index.html and allows it
// by its SHA-256 hash in the page's Content-Security-Policy. A classic script, no
// dependencies, no build step; linted with ESLint (tests/js/eslint.config.js).
//
// Rules that keep it safe: model text goes into text nodes only, URLs are checked
// before they become href/src, and nothing is ever parsed as HTML.
"use strict";
const API = document.querySelector('meta[name="ai-chat-api"]').content;
const MAX_LINE = 16 * 1024 * 1024;
const MAX_ERROR_BODY = 4096;
const log = document.getElementById("log");
const form = document.getElementById("composer");
const input = document.getElementById("input");
const sendButton = document.getElementById("send");
const stopButton = document.getElementById("stop");
const statusText = document.getElementById("status");
const CHATS = document.querySelector('meta[name="ai-chat-chats"]').content;
const chatList = document.getElementById("chats");
const chatLinks = document.getElementById("chat-links");
const newChatButton = document.getElementById("new-chat");
const TOKEN_REQUIRED = document.querySelector('meta[name="ai-chat-token"]').content === "required";
const TOKEN_KEY = "ai-chat-token";
const tokenForm = document.getElementById("token-form");
const tokenInput = document.getElementById("token-input");
const tokenNote = document.getElementById("token-note");
let tokenWaiters = [];
let tokenInMemory = null;  // when sessionStorage is unavailable (a sandboxed page)
let chatId = idFromHash() || newId();
const hasStore = CHATS !== "";
const messages = [];  // the conversation as UIMessage[]; the whole history goes with each turn
let controller = null;

function newId() {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => alphabet[b % 62]).join("");
}

function idFromHash() {
  try {
    const id = decodeURIComponent(location.hash.slice(1));
    return id && id.length <= 256 ? id : null;
  } catch {
    return null;
  }
}

// The server's token: asked for once, kept for this tab only (sessionStorage), never in a
// cookie, so that no other site's request can carry it.
function storedToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || tokenInMemory;
  } catch {
    return tokenInMemory;
  }
}

function keepToken(token) {
  tokenInMemory = token;
  try {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch { /* kept in memory for this page */ }
}

function withToken(headers) {
  const token = storedToken();
  if (token) headers.authorization = "Bearer " + token;
  return headers;
}

// Shows the token form; resolves once a token was entered.
function askToken(note) {
  tokenNote.textContent = note || "";
  tokenForm.hidden = false;
  tokenInput.focus();
  return new Promise((resolve) => tokenWaiters.push(resolve));
}

function refused(response) {
  if (response.status !== 401) return;
  keepToken(null);
  askToken("The server did not accept the token: enter it again.");
}

tokenForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const token = tokenInput.value.trim();
  if (!token) return;
  keepToken(token);
  tokenInput.value = "";
  tokenNote.textContent = "";
  tokenForm.hidden = true;
  const waiters = tokenWaiters;
  tokenWaiters = [];
  for (const resolve of waiters) resolve();
  input.focus();
});

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function setStatus(status, label) {
  document.body.dataset.status = status;
  statusText.textContent = label || status;
}

function setBusy(busy) {
  sendButton.disabled = busy;
  stopButton.disabled = !busy;
}

function scrollDown() {
  log.scrollTop = log.scrollHeight;
}

function safeUrl(url, allowDataImage) {
  if (typeof url !== "string") return null;
  try {
    const parsed = new URL(url, location.href);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") return parsed.href;
    if (allowDataImage && /^data:image\/(png|jpeg|gif|webp);/i.test(url)) return url;
  } catch {
    return null;
  }
  return null;
}

function json(value) {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

function messageView(role) {
  const view = element("article", "message " + role);
  view.dataset.role = role;
  view.append(element("div", "who", role === "user" ? "You" : "Assistant"));
  const parts = element("div", "parts");
  view.append(parts);
  log.append(view);
  return { view, parts };
}

// One rendered part: update() redraws it from the part, append() adds streamed text.
function partView(part) {
  const type = part.type;
  if (type === "text") {
    const node = element("div", "text");
    const text = document.createTextNode(part.text);
    node.append(text);
    return { node, append: (delta) => text.appendData(delta), update() {} };
  }
  if (type === "reasoning") {
    const node = element("details", "reasoning");
    const summary = element("summary", "", "Reasoning");
    const body = element("div", "reasoning-text");
    const text = document.createTextNode(part.text);
    body.append(text);
    node.append(summary, body);
    return {
      node,
      append: (delta) => text.appendData(delta),
      update: () => { summary.textContent = part.state === "streaming" ? "Reasoning…" : "Reasoning"; },
    };
  }
  if (type === "dynamic-tool" || type.startsWith("tool-")) {
    const node = element("div", "tool");
    const head = element("div", "tool-head");
    const name = element("code", "tool-name");
    const state = element("span", "tool-state");
    head.append("Tool ", name, " ", state);
    const inputBox = element("pre", "tool-input");
    const outputLabel = element("div", "label", "Output");
    const outputBox = element("pre", "tool-output");
    const error = element("div", "tool-error");
    node.append(head, element("div", "label", "Input"), inputBox, outputLabel, outputBox, error);
    return {
      node,
      update() {
        node.dataset.state = part.state;
        name.textContent = type === "dynamic-tool" ? part.toolName : type.slice(5);
        state.textContent = part.state + (part.preliminary ? " (preliminary)" : "");
        inputBox.textContent = part.input !== undefined ? json(part.input) : part.rawInput || "";
        const hasOutput = part.output !== undefined || part.state === "output-available";
        outputLabel.hidden = outputBox.hidden = !hasOutput;
        outputBox.textContent = hasOutput ? json(part.output === undefined ? null : part.output) : "";
        error.textContent = part.errorText || (part.state === "output-denied" ? "denied" : "");
      },
    };
  }
  if (type === "source-url" || type === "source-document") {
    const node = element("div", "source");
    const href = type === "source-url" ? safeUrl(part.url, false) : null;
    const label = part.title || part.url || part.filename || part.sourceId || "source";
    if (href) {
      const link = element("a", "", label);
      link.href = href;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      node.append("Source: ", link);
    } else {
      node.append("Source: " + label);
    }
    return { node, update() {} };
  }
  if (type === "file" || type === "reasoning-file") {
    const node = element("div", "file");
    const isImage = typeof part.mediaType === "string" && part.mediaType.startsWith("image/");
    const src = safeUrl(part.url, isImage);
    if (isImage && src) {
      const image = document.createElement("img");
      image.alt = part.filename || part.mediaType;
      image.src = src;
      node.append(image);
    } else if (src) {
      const link = element("a", "", part.filename || part.mediaType || "file");
      link.href = src;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      node.append("File: ", link);
    } else {
      node.append("File: " + (part.filename || part.mediaType || "file"));
    }
    return { node, update() {} };
  }
  if (type.startsWith("data-")) {
    const node = element("details", "data");
    const summary = element("summary", "", type);
    const body = element("pre");
    node.append(summary, body);
    return { node, update: () => { body.textContent = json(part.data); } };
  }
  const node = element("span");  // step-start, custom and parts this page does not show
  node.hidden = true;
  return { node, update() {} };
}

class ProtocolFault extends Error {}

// One assistant answer being assembled from UI message stream chunks.
class Turn {
  constructor() {
    this.message = { id: newId(), role: "assistant", parts: [] };
    const { view, parts } = messageView("assistant");
    this.view = view;
    this.container = parts;
    this.views = new Map();
    this.open = new Map();
    this.tools = new Map();
    this.finishReason = null;
    this.aborted = null;
  }

  add(part) {
    this.message.parts.push(part);
    const view = partView(part);
    this.views.set(part, view);
    this.container.append(view.node);
    view.update();
    return part;
  }

  redraw(part) {
    this.views.get(part).update();
  }

  opened(kind, chunk) {
    const part = this.open.get(kind + ":" + chunk.id);
    if (!part) throw new ProtocolFault(chunk.type + " for unknown id " + JSON.stringify(chunk.id));
    return part;
  }

  tool(chunk, create) {
    let part = this.tools.get(chunk.toolCallId);
    if (!part && create) {
      part = { type: chunk.dynamic ? "dynamic-tool" : "tool-" + chunk.toolName,
        toolCallId: chunk.toolCallId, state: "input-streaming" };
      if (chunk.dynamic) part.toolName = chunk.toolName;
      if (chunk.title !== undefined) part.title = chunk.title;
      if (chunk.providerExecuted !== undefined) part.providerExecuted = chunk.providerExecuted;
      if (chunk.providerMetadata !== undefined) part.callProviderMetadata = chunk.providerMetadata;
      this.tools.set(chunk.toolCallId, this.add(part));
    }
    if (!part) throw new ProtocolFault(chunk.type + " for unknown tool call " + JSON.stringify(chunk.toolCallId));
    return part;
  }

  metadata(value) {
    if (value === undefined || value === null) return;
    this.message.metadata = merge(this.message.metadata, value);
  }

  resetStep() {
    const parts = this.message.parts;
    const last = parts.map((p) => p.type).lastIndexOf("step-start");
    for (const part of parts.splice(last + 1)) {
      this.views.get(part).node.remove();
      this.views.delete(part);
    }
  }

  apply(chunk) {
    const type = chunk && chunk.type;
    if (typeof type !== "string") throw new ProtocolFault("a chunk without a type");
    switch (type) {
      case "start":
        if (typeof chunk.messageId === "string") this.message.id = chunk.messageId;
        this.metadata(chunk.messageMetadata);
        return;
      case "start-step":
        this.add({ type: "step-start" });
        return;
      case "finish-step":
        return;
      case "reset-step":
        this.resetStep();
        return;
      case "text-start":
      case "reasoning-start": {
        const kind = type.slice(0, -6);
        const part = { type: kind, text: "", state: "streaming" };
        if (chunk.providerMetadata !== undefined) part.providerMetadata = chunk.providerMetadata;
        this.open.set(kind + ":" + chunk.id, this.add(part));
        return;
      }
      case "text-delta":
      case "reasoning-delta": {
        const part = this.opened(type.slice(0, -6), chunk);
        const delta = String(chunk.delta);
        part.text += delta;
        if (chunk.providerMetadata !== undefined) part.providerMetadata = chunk.providerMetadata;
        this.views.get(part).append(delta);
        return;
      }
      case "text-end":
      case "reasoning-end": {
        const part = this.opened(type.slice(0, -4), chunk);
        part.state = "done";
        if (chunk.providerMetadata !== undefined) part.providerMetadata = chunk.providerMetadata;
        this.redraw(part);
        return;
      }
      case "tool-input-start":
        this.tool(chunk, true);
        return;
      case "tool-input-delta": {
        const part = this.tool(chunk, false);
        part.rawInput = (part.rawInput || "") + String(chunk.inputTextDelta);
        this.redraw(part);
        return;
      }
      case "tool-input-available":
      case "tool-input-error": {
        const part = this.tool(chunk, true);
        part.input = chunk.input;
        delete part.rawInput;
        if (type === "tool-input-error") {
          part.state = "output-error";
          part.errorText = String(chunk.errorText);
        } else {
          part.state = "input-available";
        }
        if (chunk.providerMetadata !== undefined) part.callProviderMetadata = chunk.providerMetadata;
        this.redraw(part);
        return;
      }
      case "tool-output-available": {
        const part = this.tool(chunk, false);
        part.state = "output-available";
        part.output = chunk.output;
        if (chunk.preliminary) part.preliminary = true;
        else delete part.preliminary;
        if (chunk.providerMetadata !== undefined) part.resultProviderMetadata = chunk.providerMetadata;
        this.redraw(part);
        return;
      }
      case "tool-output-error": {
        const part = this.tool(chunk, false);
        part.state = "output-error";
        part.errorText = String(chunk.errorText);
        this.redraw(part);
        return;
      }
      case "tool-output-denied": {
        const part = this.tool(chunk, false);
        part.state = "output-denied";
        this.redraw(part);
        return;
      }
      case "tool-approval-request": {
        const part = this.tool(chunk, false);
        part.state = "approval-requested";
        part.approval = { id: chunk.approvalId };
        this.redraw(part);
        return;
      }
      case "tool-approval-response": {
        const part = [...this.tools.values()].find((p) => p.approval && p.approval.id === chunk.approvalId);
        if (!part) throw new ProtocolFault("tool-approval-response for unknown approval");
        part.state = "approval-responded";
        part.approval.approved = Boolean(chunk.approved);
        this.redraw(part);
        return;
      }
      case "source-url":
      case "source-document":
      case "file":
      case "reasoning-file": {
        const { type: _, ...fields } = chunk;
        this.add({ type, ...fields });
        return;
      }
      case "message-metadata":
        this.metadata(chunk.messageMetadata);
        return;
      case "finish":
        this.finishReason = chunk.finishReason || "unknown";
        this.metadata(chunk.messageMetadata);
        return;
      case "abort":
        this.aborted = chunk.reason || "aborted";
        return;
      case "error": {
        const error = new Error(String(chunk.errorText));
        error.remote = true;
        throw error;
      }
      default:
        if (type.startsWith("data-")) this.data(chunk);
        // Other chunk kinds (custom, steering messages...) have nothing to show.
    }
  }

  data(chunk) {
    if (chunk.transient) return;
    const existing = chunk.id === undefined ? undefined :
      this.message.parts.find((p) => p.type === chunk.type && p.id === chunk.id);
    if (existing) {
      existing.data = chunk.data;
      this.redraw(existing);
      return;
    }
    const part = { type: chunk.type, data: chunk.data };
    if (chunk.id !== undefined) part.id = chunk.id;
    this.add(part);
  }

  note(className, text) {
    const node = element("div", className, text);
    if (className === "error") node.setAttribute("role", "alert");
    this.view.append(node);
    return node;
  }
}

function merge(target, source) {
  if (!isObject(target) || !isObject(source)) return source;
  const result = { ...target };
  for (const [key, value] of Object.entries(source)) result[key] = merge(result[key], value);
  return result;
}

function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Reads an SSE body and calls onData with each event's data (LF, CR or CRLF line ends).
async function readEvents(body, onData) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let skipLineFeed = false;
  let data = [];
  const line = (text) => {
    if (text === "") {
      if (data.length) onData(data.join("\n"));
      data = [];
      return;
    }
    if (text[0] === ":") return;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value[0] === " ") value = value.slice(1);
    if (field === "data") data.push(value);
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      let text = value;
      if (!text) continue;
      if (skipLineFeed && text[0] === "\n") text = text.slice(1);
      skipLineFeed = text.endsWith("\r");
      buffer += text;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      if (buffer.length > MAX_LINE) throw new ProtocolFault("an event stream line is too long");
      for (const each of lines) line(each);
    }
    if (buffer || data.length) throw new ProtocolFault("the answer was cut off inside an event");
  } finally {
    reader.cancel().catch(() => {});
  }
}

async function errorBody(response) {
  try {
    const text = await response.text();
    try {
      const parsed = JSON.parse(text);
      let detail = parsed && (parsed.error || parsed.detail || parsed.message);
      if (isObject(detail) && typeof detail.message === "string") detail = detail.message;
      if (detail) return (typeof detail === "string" ? detail : json(detail)).slice(0, MAX_ERROR_BODY);
    } catch { /* not JSON: show the text */ }
    return text.slice(0, MAX_ERROR_BODY);
  } catch {
    return "";
  }
}

function describeFinish(turn) {
  let text = "finish: " + turn.finishReason;
  const metadata = turn.message.metadata;
  const usage = isObject(metadata) && (isObject(metadata.usage) ? metadata.usage : metadata.totalUsage);
  if (isObject(usage)) {
    const counts = [["inputTokens", "in"], ["outputTokens", "out"], ["totalTokens", "total"]]
      .filter(([key]) => typeof usage[key] === "number")
      .map(([key, label]) => usage[key] + " " + label);
    if (counts.length) text += " · tokens: " + counts.join(", ");
  }
  return text;
}

async function send(text) {
  if (hasStore && idFromHash() !== chatId) history.replaceState(null, "", "#" + encodeURIComponent(chatId));
  const user = { id: newId(), role: "user", parts: [{ type: "text", text }] };
  messages.push(user);
  messageView("user").parts.append(element("div", "text", text));
  const turn = new Turn();
  scrollDown();
  const request = new AbortController();
  controller = request;
  setBusy(true);
  setStatus("submitted", "waiting for the answer…");
  let outcome = "ready";
  try {
    const response = await fetch(API, {
      method: "POST",
      headers: withToken({ "content-type": "application/json" }),
      body: JSON.stringify({ id: chatId, messages, trigger: "submit-message" }),
      signal: request.signal,
    });
    if (!response.ok) {
      refused(response);
      const detail = await errorBody(response);
      throw new Error("HTTP " + response.status + (detail ? ": " + detail : ""));
    }
    if (!response.body) throw new Error("the server sent no answer body");
    setStatus("streaming", "streaming…");
    await readEvents(response.body, (data) => {
      if (data === "[DONE]") return;
      let chunk;
      try {
        chunk = JSON.parse(data);
      } catch {
        throw new ProtocolFault("a chunk is not JSON: " + data.slice(0, 200));
      }
      turn.apply(chunk);
      scrollDown();
    });
    if (turn.aborted !== null) {
      outcome = "stopped";
      turn.note("notice stopped", "The server stopped the answer (" + turn.aborted + ").");
    } else if (turn.finishReason === null) {
      throw new ProtocolFault("the answer ended before its finish chunk");
    } else {
      turn.note("finish", describeFinish(turn));
    }
  } catch (error) {
    if (request.signal.aborted) {
      outcome = "stopped";
      turn.note("notice stopped", "Stopped.");
    } else {
      outcome = "error";
      const what = error && error.remote ? "The server reported an error: " :
        error instanceof ProtocolFault ? "Bad answer stream: " : "Request failed: ";
      turn.note("error", what + (error && error.message ? error.message : String(error)));
    }
  } finally {
    if (controller === request) controller = null;
    if (turn.message.parts.length) messages.push(turn.message);
    if (hasStore) listChats();
    setBusy(false);
    setStatus(outcome, outcome === "ready" ? "ready" : outcome);
    scrollDown();
    input.focus();
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text || controller) return;
  input.value = "";
  send(text);
});

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    form.requestSubmit();
  }
});

stopButton.addEventListener("click", () => {
  if (controller) controller.abort();
});

// Conversations kept by the server (only when it has a store: GET CHATS answers 200).
function clearLog() {
  messages.length = 0;
  log.replaceChildren();
}

function showMessage(message) {
  if (!isObject(message) || !Array.isArray(message.parts)) return;
  const role = message.role === "user" ? "user" : message.role === "system" ? "system" : "assistant";
  const { parts } = messageView(role);
  for (const part of message.parts) {
    if (!isObject(part) || typeof part.type !== "string") continue;
    const view = partView(part);
    parts.append(view.node);
    view.update();
  }
  messages.push(message);
}

async function getJSON(url) {
  const response = await fetch(url, { headers: withToken({ accept: "application/json" }) });
  if (!response.ok) {
    refused(response);
    return { status: response.status, body: null };
  }
  return { status: response.status, body: await response.json() };
}

async function listChats() {
  let answer;
  try {
    answer = await getJSON(CHATS);
  } catch {
    return;
  }
  if (answer.status !== 200 || !isObject(answer.body) || !Array.isArray(answer.body.chats)) return;
  const items = [];
  for (const chat of answer.body.chats) {
    if (!isObject(chat) || typeof chat.id !== "string") continue;
    const link = element("a", "chat-link", chat.title || "(untitled)");
    link.href = "#" + encodeURIComponent(chat.id);
    link.dataset.chatId = chat.id;
    if (chat.id === chatId) link.setAttribute("aria-current", "page");
    const item = element("li");
    item.append(link);
    items.push(item);
  }
  chatLinks.replaceChildren(...items);
}

async function openChat(id) {
  if (controller) controller.abort();
  chatId = id;
  clearLog();
  setStatus("loading", "loading the conversation…");
  let answer;
  try {
    answer = await getJSON(CHATS + "/" + encodeURIComponent(id));
  } catch {
    setStatus("error", "could not load the conversation");
    return;
  }
  if (answer.status === 200 && isObject(answer.body) && Array.isArray(answer.body.messages)) {
    for (const message of answer.body.messages) showMessage(message);
    scrollDown();
    setStatus("ready", "ready");
  } else {
    setStatus("ready", answer.status === 404 ? "new conversation" : "ready");
  }
  for (const link of chatLinks.querySelectorAll("a")) {
    if (link.dataset.chatId === id) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

newChatButton.addEventListener("click", () => {
  if (controller) controller.abort();
  chatId = newId();
  history.replaceState(null, "", location.pathname + location.search);
  clearLog();
  listChats();
  setStatus("ready", "new conversation");
  input.focus();
});

window.addEventListener("hashchange", () => {
  const id = idFromHash();
  if (hasStore && id && id !== chatId) openChat(id);
});

async function start() {
  setBusy(false);
  if (TOKEN_REQUIRED && !storedToken()) {
    setStatus("token", "waiting for the token");
    await askToken();
  }
  if (hasStore) {
    chatList.hidden = false;
    await listChats();
    const id = idFromHash();
    if (id) await openChat(id);
    else setStatus("ready");
  } else {
    setStatus("ready");
  }
  input.focus();
}

start();
