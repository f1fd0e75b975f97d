/**
 * How long a running activity may go without a heartbeat before the server takes its worker
 * for dead and retries it (on another worker). Every activity beats every 5 s while it runs
 * (activities/heartbeat.ts `heartbeatingAll`, HEARTBEAT_EVERY_MS): four beats missed. Without
 * it a killed worker's activity is retried only after its whole start-to-close timeout
 * (minutes), and a step that takes seconds waits that long.
 */
export const ACTIVITY_HEARTBEAT = '20 seconds';
