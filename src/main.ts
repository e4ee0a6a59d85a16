/**
 * Starts the server (src/server.ts). libuv reads UV_THREADPOOL_SIZE once, when its thread pool
 * first starts, so it is set here, before any module is loaded. The pool runs every file-system
 * call; a user creation waits on two fsyncs of its block, and with libuv's default of four
 * threads, concurrent creations queued behind each other's fsyncs (measured: 606 -> 834 creates/s
 * at 10 connections, 834 -> 921 at 50, with 16). An operator's own value is kept.
 */
process.env['UV_THREADPOOL_SIZE'] ??= '16';
await import('./server.ts');
