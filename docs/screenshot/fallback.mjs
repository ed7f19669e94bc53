// FALLBACK, not agent-chat-ui: a minimal page built with @langchain/langgraph-sdk that reads a
// thread's messages and its interrupt and draws the interrupt's action_requests /
// review_configs as buttons, the way agent-chat-ui decides to (isAgentInboxInterruptSchema).
// Used only when agent-chat-ui cannot be built; the picture is labelled as such.
//
// Usage: node fallback.mjs API_URL THREAD_ID TOKEN OUT.png
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { chromium } from "playwright-core";

const [apiUrl, threadId, token, out] = process.argv.slice(2);
const client = new Client({ apiUrl, apiKey: token }); // sent as x-api-key
const state = await client.threads.getState(threadId);
const value = (state.interrupts ?? state.tasks.flatMap((t) => t.interrupts ?? []))[0]?.value;
const drawable =
  value &&
  Array.isArray(value.action_requests) &&
  value.action_requests.length > 0 &&
  Array.isArray(value.review_configs) &&
  value.review_configs.length > 0;
if (!drawable) throw new Error(`no HITLRequest interrupt on ${threadId}`);

const esc = (s) =>
  String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
const text = (m) =>
  typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("");
const bubbles = state.values.messages
  .filter((m) => (m.type === "human" || m.type === "ai") && text(m))
  .map((m) => `<div class="msg ${m.type}">${esc(text(m)).replace(/\n/g, "<br>")}</div>`)
  .join("");
const cards = value.action_requests
  .map((action) => {
    const config = value.review_configs.find((c) => c.action_name === action.name) ?? {};
    const rows = Object.entries(action.args)
      .map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`)
      .join("");
    const label = { approve: "Approve", edit: "Edit", reject: "Reject", respond: "Respond" };
    const buttons = (config.allowed_decisions ?? [])
      .map((d) => `<button class="${d}">${label[d] ?? esc(d)}</button>`)
      .join("");
    return `<div class="card"><h3>${esc(action.name)}</h3>
      <p>${esc(action.description ?? "")}</p><table>${rows}</table>
      <div class="buttons">${buttons}</div></div>`;
  })
  .join("");
const html = `<!doctype html><meta charset="utf-8"><style>
  body{font:15px system-ui,"Noto Sans CJK SC",sans-serif;margin:0;background:#fafafa;color:#111}
  .banner{background:#fff3cd;padding:8px 16px;border-bottom:1px solid #e0c97a;font-size:13px}
  .wrap{max-width:760px;margin:24px auto;padding:0 16px}
  .msg{padding:10px 14px;border-radius:14px;margin:10px 0;max-width:80%;line-height:1.5}
  .human{background:#e8e8ea;margin-left:auto}.ai{background:#fff;border:1px solid #ddd}
  .card{border:1px solid #ccc;border-radius:10px;background:#fff;padding:12px 16px;margin-top:16px}
  h3{margin:0 0 4px;font-size:15px}p{margin:0 0 8px;color:#555;white-space:pre-line}
  table{border-collapse:collapse;margin-bottom:12px}th,td{border:1px solid #e5e5e5;padding:4px 10px;text-align:left}
  button{margin-right:8px;padding:6px 16px;border-radius:6px;border:1px solid #999;background:#fff;font-size:14px}
  button.approve{background:#111;color:#fff;border-color:#111}
</style><div class="banner">Minimal page from <code>@langchain/langgraph-sdk</code> (docs/screenshot/fallback.mjs),
not agent-chat-ui: it draws the interrupt's <code>action_requests</code> / <code>review_configs</code>
as agent-chat-ui would. Thread ${esc(threadId)} on ${esc(apiUrl)}.</div>
<div class="wrap">${bubbles}${cards}</div>`;
const page_path = join(tmpdir(), `reach-fallback-${process.pid}.html`);
writeFileSync(page_path, html);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  await page.goto(`file://${page_path}`);
  await page.getByRole("button", { name: "Approve" }).first().waitFor();
  await page.screenshot({ path: out, fullPage: true });
  console.log(`saved ${out} (fallback page, not agent-chat-ui)`);
} finally {
  await browser.close();
}
