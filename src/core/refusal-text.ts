/**
 * An API refusal's message as a client shows it to whoever named the field: without the part of the request it
 * was in (`body.cursor: …` → `cursor: …`, `unknown field "x" in body` → `unknown field "x"`). The CLI shows
 * refusals so, and the MCP tools over either backend, so that one mistake reads the same everywhere.
 */
export const refusalText = (message: string): string => message.replace(/^(body|query|params)\./, '').replace(/ in (body|query|params)$/, '');
