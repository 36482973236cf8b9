#include "trace/trace-hw_misc_lanai.h"
