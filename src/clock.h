/* clock.h - the monotonic clock every layer times itself with. */
#ifndef ATA_CLOCK_H
#define ATA_CLOCK_H

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
double clock_now(void);

#endif
