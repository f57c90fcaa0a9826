package review

// The games usid ships, registered as the wiring registers them.
import _ "github.com/usid/usid/game/builtin"
