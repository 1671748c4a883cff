/* <cjson/cJSON.h>, where Debian's libcjson-dev installs it (the tools include it so) */
#include "../../cJSON.h"
