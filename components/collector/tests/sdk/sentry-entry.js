// The page's Sentry setup, bundled by make-fixtures.mjs with esbuild: @sentry/browser's
// UI profiling in manual lifecycle, its envelopes sent to the DSN's host (the recorder, or
// the collector itself in live.mjs, which names its own release and environment). With
// `tracing`, as an app with tracing on runs it: browserTracingIntegration (page loads,
// long animation frames, web vitals, streamed as spans) and the profiler in the `trace`
// lifecycle (it runs while a page load or navigation does), every session sampled.
import * as Sentry from '@sentry/browser';

window.startSentry = (dsn, release = 'shop@3.1.4', environment = 'fixtures', tracing = false) => {
  if (tracing) {
    Sentry.init({
      dsn,
      release,
      environment,
      integrations: [Sentry.browserTracingIntegration(), Sentry.browserProfilingIntegration()],
      tracesSampleRate: 1.0,
      profileSessionSampleRate: 1.0,
      profileLifecycle: 'trace',
    });
    return;
  }
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
