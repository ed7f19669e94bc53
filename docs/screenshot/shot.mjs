// Photograph one thread in agent-chat-ui with headless Chromium (playwright-core).
//
// Usage: node shot.mjs UI_URL API_URL THREAD_ID TOKEN OUT.png
// The token goes where agent-chat-ui keeps the "LangSmith API Key" field's value
// (localStorage "lg:chat:apiKey"); it is sent to the server as x-api-key.
import { chromium } from "playwright-core";

const [uiUrl, apiUrl, threadId, token, out] = process.argv.slice(2);
if (!out) {
  console.error("usage: node shot.mjs UI_URL API_URL THREAD_ID TOKEN OUT.png");
  process.exit(2);
}

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
  const context = await browser.newContext({ viewport: { width: 1280, height: 1600 } });
  await context.addInitScript((key) => {
    window.localStorage.setItem("lg:chat:apiKey", key);
  }, token);
  const page = await context.newPage();
  page.on("console", (msg) => {
    if (msg.type() === "error") console.error("[browser]", msg.text());
  });
  const url = new URL(uiUrl);
  url.searchParams.set("apiUrl", apiUrl);
  url.searchParams.set("assistantId", "agent");
  url.searchParams.set("threadId", threadId);
  url.searchParams.set("chatHistoryOpen", "false");
  await page.goto(url.toString(), { waitUntil: "domcontentloaded", timeout: 120_000 });
  // agent-chat-ui draws Approve / Edit / Reject only for a HITLRequest interrupt value
  await page.getByRole("button", { name: /^Approve$/ }).first().waitFor({ timeout: 120_000 });
  // Reject is a card of its own (a reason is required) headed "Reject"
  await page.getByText("Reject", { exact: true }).first().waitFor({ timeout: 30_000 });
  await page.waitForTimeout(1000); // let the last layout shift settle before the picture
  await page.screenshot({ path: out, fullPage: true });
  console.log(`saved ${out}`);
} finally {
  await browser.close();
}
