import https from "node:https";

/**
 * A fetch-shaped function over node:https that trusts the given PEM certificate(s) and only those, host names still
 * verified. The global fetch takes no CA (short of NODE_EXTRA_CA_CERTS, read once at start-up); this covers the one
 * request the retriever makes (POST, JSON body, text response).
 * @param {string|Buffer} ca
 * @returns {(url: string, init: {method: string, headers: Record<string, string>, body: string}) =>
 *   Promise<{ok: boolean, status: number, text: () => Promise<string>}>}
 */
export function fetchTrusting(ca) {
  const agent = new https.Agent({ ca, keepAlive: true });
  return (url, init) =>
    new Promise((resolve, reject) => {
      const request = https.request(url, { method: init.method, headers: init.headers, agent }, (response) => {
        const chunks = [];
        response.on("data", (c) => chunks.push(c));
        response.on("error", reject);
        response.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8");
          const status = response.statusCode ?? 0;
          resolve({ ok: status >= 200 && status < 300, status, text: async () => body });
        });
      });
      request.on("error", reject);
      request.end(init.body);
    });
}
