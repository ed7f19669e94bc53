// Drive agent-chat-ui through the refund confirmation four ways (issue 38) with headless
// Chromium (playwright-core), photographing each, and record what the page sent.
//
// Usage: node flows.mjs UI_URL API_URL TOKEN OUT_DIR [FLOW]
// For each flow a thread is started over the API with the refund request (as agent-chat-ui
// sends it), the page is opened on it, and the user approves, types 确认, types a correction
// or rejects. Printed on stdout, one JSON line per flow: the thread id, the bodies the page
// POSTed to /runs, and the thread's stored messages afterwards.
import { chromium } from "playwright-core";

const [uiUrl, apiUrl, token, outDir, only] = process.argv.slice(2);
if (!outDir) {
  console.error("usage: node flows.mjs UI_URL API_URL TOKEN OUT_DIR");
  process.exit(2);
}
const REQUEST = "订单 OD-20240618-002 送到了但是洒了，我要退款";
const headers = { "content-type": "application/json", "x-api-key": token };

async function api(path, body) {
  const response = await fetch(`${apiUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function pendingThread() {
  const { thread_id: threadId } = await api("/threads", {});
  const message = { type: "human", content: [{ type: "text", text: REQUEST }] };
  await api(`/threads/${threadId}/runs/wait`, {
    assistant_id: "agent",
    input: { messages: [message] },
  });
  return threadId;
}

async function settled(threadId, before) {
  // the run the page started has finished: the thread is idle and its messages changed
  for (let i = 0; i < 240; i++) {
    const thread = await api(`/threads/${threadId}`);
    const state = await api(`/threads/${threadId}/state`);
    const count = (state.values?.messages || []).length;
    if (thread.status !== "busy" && count > before) return state;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`thread ${threadId} did not settle`);
}

const flows = {
  approve: async (page) => {
    await page.getByRole("button", { name: /^Approve$/ }).first().click();
  },
  typed_yes: async (page) => {
    await page.getByPlaceholder("Type your message...").fill("确认");
    await page.getByRole("button", { name: /^Send$/ }).click();
  },
  typed_correction: async (page) => {
    await page.getByPlaceholder("Type your message...").fill("不对，是订单 OD-20240618-001");
    await page.getByRole("button", { name: /^Send$/ }).click();
  },
  reject: async (page) => {
    await page.getByPlaceholder("Share feedback with the agent...").fill("不需要了");
    await page.getByRole("button", { name: /^Submit rejection$/ }).click();
  },
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"],
});
try {
  for (const [name, act] of Object.entries(flows)) {
    if (only && name !== only) continue;
    const threadId = await pendingThread();
    const context = await browser.newContext({ viewport: { width: 1280, height: 1400 } });
    await context.addInitScript((key) => window.localStorage.setItem("lg:chat:apiKey", key), token);
    const page = await context.newPage();
    const sent = [];
    page.on("request", (request) => {
      if (request.method() === "POST" && /\/runs/.test(request.url())) {
        sent.push(request.postDataJSON());
      }
    });
    const url = new URL(uiUrl);
    url.searchParams.set("apiUrl", apiUrl);
    url.searchParams.set("assistantId", "agent");
    url.searchParams.set("threadId", threadId);
    url.searchParams.set("chatHistoryOpen", "false");
    await page.goto(url.toString(), { waitUntil: "domcontentloaded", timeout: 120_000 });
    await page.getByRole("button", { name: /^Approve$/ }).first().waitFor({ timeout: 120_000 });
    await page.waitForTimeout(1000);
    if (name === "approve") {
      await page.screenshot({ path: `${outDir}/refund-confirmation.png`, fullPage: true });
    }
    const before = ((await api(`/threads/${threadId}/state`)).values?.messages || []).length;
    await act(page);
    const state = await settled(threadId, before);
    await page.waitForTimeout(2500); // the page shows what the stream brought
    await page.screenshot({ path: `${outDir}/refund-${name.replace("_", "-")}.png`, fullPage: true });
    console.log(
      JSON.stringify({
        flow: name,
        thread_id: threadId,
        sent,
        interrupts: (state.tasks || []).flatMap((task) => task.interrupts || []),
        messages: state.values.messages,
      }),
    );
    await context.close();
  }
} finally {
  await browser.close();
}
