/** jq compiled to WebAssembly (https://github.com/fiatjaf/jq-web): the module is a promise of the runner. */
declare module 'jq-web' {
  interface Jq {
    /** Runs `filter` over `json` as `jq <flags> <filter>` would and returns its stdout; throws jq's stderr. */
    raw(json: string, filter: string, flags?: string[]): string;
  }
  const jq: Promise<Jq>;
  export default jq;
}
