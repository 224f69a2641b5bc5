/**
 * How a test starts a TypeScript program of this project as a child process (a server, the api-key
 * command, a script): on the same type stripping as the test processes (typescript-loader.ts), so that
 * it runs the current sources with nothing compiled and no cache to fill. `node ...TYPESCRIPT file.ts`.
 */
export const TYPESCRIPT: readonly string[] = [`--import=${new URL('./typescript-loader.ts', import.meta.url).href}`]
