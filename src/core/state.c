/* The run's settings and state that the core reads: set by the lifecycle above
 * (lifecycle/config.c reads the settings from the environment, start.c the rest). */
#include "core/core.h"

struct tt__config tt__config;
int tt__recording;
int tt__forked;
unsigned tt__exec_image;
int tt__crash_signal;
