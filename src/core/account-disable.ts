/**
 * What disabling an account ends for good, in the words both commands ask with before they disable one
 * (`docsearch users disable` on the server machine, `docsearch admin users disable` over HTTP).
 */
export const DISABLE_CONSEQUENCE = 'It is signed out everywhere, and its API keys and connected apps are revoked for good (enabling it again does not bring them back).';
