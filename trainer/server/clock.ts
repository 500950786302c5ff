// The trainer's clock for checkpoint expiry. AGL_TRAINER_CLOCK_OFFSET_SECONDS (tests only) moves it forward, so a
// test can restart the trainer "days later" and see what its sweeper deletes, without waiting days.
const offsetSeconds = Number(process.env.AGL_TRAINER_CLOCK_OFFSET_SECONDS ?? 0);
if (!Number.isFinite(offsetSeconds)) throw new Error(`AGL_TRAINER_CLOCK_OFFSET_SECONDS must be a number of seconds, got ${process.env.AGL_TRAINER_CLOCK_OFFSET_SECONDS}`);

/** Now, in ms since the epoch, as checkpoint expiry counts it. */
export const trainerNow = (): number => Date.now() + offsetSeconds * 1000;
