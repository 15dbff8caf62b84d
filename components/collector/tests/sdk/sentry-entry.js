// The page's Sentry setup, bundled by make-fixtures.mjs with esbuild: @sentry/browser's
// UI profiling in manual lifecycle, its envelopes sent to the DSN's host (the recorder, or
// the collector itself in live.mjs, which names its own release and environment).
import * as Sentry from '@sentry/browser';

window.startSentry = (dsn, release = 'shop@3.1.4', environment = 'fixtures') => {
  Sentry.init({
    dsn,
    release,
    environment,
    integrations: [Sentry.browserProfilingIntegration()],
    profileSessionSampleRate: 1.0,
    profileLifecycle: 'manual',
  });
  Sentry.uiProfiler.startProfiler();
};
window.stopSentry = () => Sentry.uiProfiler.stopProfiler();
