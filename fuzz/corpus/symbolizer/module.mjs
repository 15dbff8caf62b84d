export default function () {}
export const z = () => {};
export class Q { m() {} }
