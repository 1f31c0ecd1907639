#include "frontend/stablehlo/parser.h"
