// Integration tests drive real servers (launch → CSR → register → drain → terminate):
// generous per-test time; jest's `testTimeout` is a global option, not a per-project one.
jest.setTimeout(180_000);

// Workers log every state change at INFO; tests want warnings and errors only. The
// Runtime is a per-process singleton, so a second test file finds it installed already.
import { DefaultLogger, Runtime } from '@temporalio/worker';
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch (err) {
  if (!(err instanceof Error && /already/i.test(err.message))) throw err;
}
