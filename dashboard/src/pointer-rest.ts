/**
 * Where the pointer last moved to, from the page's own mouse moves. A browser also sends `mouseover`
 * when the page moves under a pointer at rest (the grid appearing under the "Log in" button just
 * clicked, a scroll, rows coming and going), at the place the pointer rests: that is no one pointing.
 */
let last: { x: number; y: number } | undefined

// Bubbling at the window, after the page's own handlers: a handler of this move still sees the place before it.
window.addEventListener('mousemove', (event) => (last = { x: event.clientX, y: event.clientY }), { passive: true })

/** Whether `event` happened where the pointer already rested, so the user did not move it there. */
export const pointerAtRest = (event: MouseEvent) => last !== undefined && last.x === event.clientX && last.y === event.clientY
