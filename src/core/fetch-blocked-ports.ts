/**
 * The ports the Fetch standard's "bad port" list names (https://fetch.spec.whatwg.org/#port-blocking): browsers and
 * Node's fetch refuse to connect to them, so a daemon listening on one is out of reach of the web pages and of
 * the docsearch CLI unless a proxy stands in front. Plain data, so that the CLI can load it.
 */
const BLOCKED = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540,
  548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566,
  6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

export const isFetchBlockedPort = (port: number): boolean => BLOCKED.has(port);

/** Why a browser or the CLI cannot reach `port`, and what to do: one sentence for serve's notice and the CLI's error. */
export const blockedPortText = (port: number): string =>
  `browsers and the docsearch CLI refuse to connect to port ${port} (the Fetch standard's blocked ports); choose another --port, or put a proxy in front and set --public-url`;
