/**
 * The only source of "now" in the service (decision D6). Production reads the system
 * clock; tests pin it and move it forward instead of sleeping.
 */
let offsetMs = 0;
let frozenAt: number | null = null;

export const clock = {
  /** Current time in milliseconds since the epoch. */
  nowMs(): number {
    return frozenAt ?? Date.now() + offsetMs;
  },
  now(): Date {
    return new Date(clock.nowMs());
  },
  /** Pins the clock at an instant (tests only). */
  set(at: Date | number): void {
    frozenAt = typeof at === 'number' ? at : at.getTime();
  },
  /** Moves the clock forward by `ms`, pinned or not (tests only). */
  advance(ms: number): void {
    if (frozenAt !== null) frozenAt += ms;
    else offsetMs += ms;
  },
  /** Back to the system clock. */
  reset(): void {
    frozenAt = null;
    offsetMs = 0;
  },
};
