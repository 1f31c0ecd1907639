#include "runtime/interpreter/interpreter.h"
