#include "allocator/allocator.h"
