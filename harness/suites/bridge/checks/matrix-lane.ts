// The matrix checks of document 2 (issue 25) share one lane of their own: they run beside the
// suite's other checks instead of after them, and their cells share a target already warm.
export const MATRIX_LANE = 'bridge/matrix';
