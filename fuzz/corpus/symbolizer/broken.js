function ok() {}
function broken( {
const after = () => 1;
