#include "CAnchors.h"
