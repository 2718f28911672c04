// The console's entry: login, the header, and a router on #fragments.
import { h, clear } from "./dom.js";
import { whoami, login, logout, session, setLoggedOutHandler, APIError } from "./api.js";
import { esc } from "./esc.js";
import { overview } from "./overview.js";
import { messages, groups } from "./list.js";
import { message } from "./message.js";
import { auditPage } from "./audit.js";
import { replays, replay } from "./replays.js";
import { paused } from "./partners.js";

const main = document.getElementById("main");

function showLogin(why) {
  document.getElementById("nav").hidden = true;
  clear(document.getElementById("who"));
  const input = h("input", { type: "password", id: "token", autocomplete: "off", placeholder: "API token (api.tokens in the config)" });
  const err = h("p", { class: "error", id: "login-error" }, why || "");
  const form = h("form", { class: "login box", id: "login" },
    h("h1", null, "edihub console"),
    h("p", null, "Paste your API token. The browser keeps only a session cookie (HttpOnly, this site only) until it expires or you log out."),
    input, h("button", { class: "primary", type: "submit", id: "login-button" }, "Log in"), err);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try { await login(input.value); input.value = ""; start(); }
    catch (e) { err.textContent = e.status === 401 ? "Unknown token." : "Login failed: " + esc(e.message); }
  });
  clear(main).append(form);
  input.focus();
}

function header() {
  document.getElementById("nav").hidden = false;
  const who = clear(document.getElementById("who"));
  const until = session.expires ? " · until " + new Date(session.expires).toISOString().slice(11, 16) + "Z" : "";
  who.append(h("span", { id: "whoami", "data-role": session.role }, esc(session.name) + " (" + session.role + ")" + until),
    h("button", { id: "logout", onclick: async () => { await logout(); showLogin("Logged out."); } }, "Log out"));
}

async function route() {
  const hash = location.hash || "#/";
  const [path, query] = hash.slice(1).split("?");
  const params = new URLSearchParams(query || "");
  for (const a of document.querySelectorAll("#nav a")) {
    const target = a.getAttribute("href").slice(1);
    a.classList.toggle("active", target === "/" ? path === "/" : path.startsWith(target));
  }
  const view = h("div", { id: "view", "data-hash": location.hash });
  clear(main).append(view);
  try {
    if (path === "/" || path === "") await overview(view, params);
    else if (path === "/messages") await messages(view, params);
    else if (path === "/groups") await groups(view, params);
    else if (path.startsWith("/message/")) await message(view, decodeURIComponent(path.slice(9)));
    else if (path === "/audit") await auditPage(view, params);
    else if (path === "/replays") await replays(view);
    else if (path === "/partners") await paused(view);
    else if (path.startsWith("/replay/")) await replay(view, decodeURIComponent(path.slice(8)));
    else view.append(h("p", null, "No such page."));
  } catch (e) {
    if (e instanceof APIError && e.status === 401) return;
    view.append(h("div", { class: "box error", id: "page-error" }, "Error: " + esc(e.message)));
  }
}

let started = false;
function start() {
  header();
  if (!started) { window.addEventListener("hashchange", route); started = true; }
  route();
}

setLoggedOutHandler((why) => showLogin("Logged out: " + esc(why)));

(async () => {
  try {
    if (await whoami()) start(); else showLogin("");
  } catch (e) {
    clear(main).append(h("p", { class: "error" }, "Cannot reach the API: " + esc(e.message)));
  }
})();
