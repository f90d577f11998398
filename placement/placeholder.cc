#include "placement/device_name.h"
