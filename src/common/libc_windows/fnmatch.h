/* glibc's <fnmatch.h> in the Windows build of the tools: fnmatch is libc_windows.h's. */
#include "libc_windows.h"
