// The strict reader's adapter to yaml-cpp: a node's type as core/strict_fields.h's errors name it.
// Header-only over yaml-cpp: link yaml-cpp where it is included.
#pragma once

#include <yaml-cpp/yaml.h>

#include "core/strict_fields.h"

namespace migscope {

inline const char* yaml_type(const YAML::Node& node) {
    if (node.IsMap())
        return "a mapping";
    if (node.IsSequence())
        return "a list";
    if (node.IsScalar())
        return "a scalar";
    return "null";
}

}  // namespace migscope
