// Every op family's header, for callers that use many (transforms, bindings, rules). Each op
// validates its arguments, works out the output's shape and dtype eagerly, and records a node;
// invalid calls throw OpError naming the op.
#pragma once
#include "core/ops/common.h"
#include "core/ops/conv.h"
#include "core/ops/creation.h"
#include "core/ops/elementwise.h"
#include "core/ops/indexing.h"
#include "core/ops/matmul.h"
#include "core/ops/random.h"
#include "core/ops/reduce.h"
#include "core/ops/scan.h"
#include "core/ops/shape.h"
#include "core/ops/sort.h"
