// Every read and action of the console is one call to /api/v1/. The
// session cookie is HttpOnly (this script never sees it); writes carry
// the CSRF token the API gave at login.
let csrf = "";
export const session = { name: "", role: "", expires: "" };
let onLoggedOut = () => {};

export class APIError extends Error {
  constructor(status, msg, data) { super(msg); this.status = status; this.data = data; }
}

export function setLoggedOutHandler(f) { onLoggedOut = f; }
export function isOperator() { return session.role === "operator"; }

function setSession(d) {
  csrf = d.csrf || "";
  session.name = d.name; session.role = d.role; session.expires = d.expires || "";
}

// call sends one request; statuses in okStatuses (besides 2xx) are
// answers too (audit verify says 409 for a broken chain).
export async function call(method, path, body, okStatuses = []) {
  const opt = { method, headers: {}, credentials: "same-origin", cache: "no-store" };
  if (body !== undefined) { opt.headers["Content-Type"] = "application/json"; opt.body = JSON.stringify(body); }
  if (method !== "GET" && method !== "HEAD") opt.headers["X-CSRF-Token"] = csrf;
  const r = await fetch(path, opt);
  let data = null;
  try { data = await r.json(); } catch { data = null; }
  if (r.status === 401 && path !== "/api/v1/session") { onLoggedOut((data && data.error) || "session ended"); }
  if (!r.ok && !okStatuses.includes(r.status)) throw new APIError(r.status, (data && data.error) || r.statusText, data);
  return data;
}

export const get = (path) => call("GET", path);
export const post = (path, body, ok) => call("POST", path, body || {}, ok);

export async function whoami() {
  try { setSession(await call("GET", "/api/v1/session")); return true; }
  catch (e) { if (e.status === 401) return false; throw e; }
}

export async function login(token) {
  setSession(await call("POST", "/api/v1/session", { token }));
}

export async function logout() {
  try { await call("DELETE", "/api/v1/session"); } finally { csrf = ""; session.name = session.role = ""; }
}

// qs builds a query string from an object, leaving out empty values.
export function qs(o) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null && v !== "" && v !== false) p.set(k, String(v));
  const s = p.toString();
  return s ? "?" + s : "";
}
