// The page's Sentry setup, bundled by make-fixtures.mjs with esbuild: @sentry/browser's
// UI profiling in manual lifecycle, its envelopes sent to the DSN's host (the recorder).
import * as Sentry from '@sentry/browser';

window.startSentry = (dsn) => {
  Sentry.init({
    dsn,
    release: 'shop@3.1.4',
    environment: 'fixtures',
    integrations: [Sentry.browserProfilingIntegration()],
    profileSessionSampleRate: 1.0,
    profileLifecycle: 'manual',
  });
  Sentry.uiProfiler.startProfiler();
};
window.stopSentry = () => Sentry.uiProfiler.stopProfiler();
